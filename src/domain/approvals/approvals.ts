import { formatUnits } from 'viem'
import { z } from 'zod'
import { decodeTupleCursor, encodeTupleCursor } from '../paging.schema.ts'
import { NotFoundError, ServiceError } from '../errors.ts'
import type { ApprovalDecision, ApprovalOperation, ApprovalPorts } from './ports.ts'
import type { DecideApprovalBody, ListApprovalsQuery } from './approval.schema.ts'

/** 409 `approval_decided`: the approval was approved, rejected or expired already. */
export class ApprovalDecidedError extends ServiceError {
  constructor({ status, reason }: { status: string; reason: string | null }) {
    super(`This approval is ${status}${reason === 'expired' ? ' (expired)' : ''} already.`, { code: 'approval_decided', status: 409 })
  }
}

/** What the move does, in the words of its request (a swap's tokens and amount, a transfer's recipient). */
function summaryOf(op: ApprovalOperation) {
  const p = op.params as Record<string, any>
  if (op.kind === 'swap') {
    return { tokenIn: p.tokenInInfo?.symbol, tokenOut: p.tokenOutInfo?.symbol, amountIn: formatUnits(BigInt(p.amountIn), p.tokenInInfo?.decimals ?? 18) }
  }
  if (op.kind === 'transfer') return { token: p.token, to: p.to }
  if (op.kind === 'launch') return { venue: p.venue, symbol: p.symbol, quote: p.quote, seedAmount: p.seedAmount }
  return {}
}

/** An approval as the API shows it: the request, the decision (who, when, why) and its operation as it stands. */
export function approvalView(op: ApprovalOperation) {
  const a = op.approval
  return {
    id: a.id,
    agentId: op.agentId,
    kind: op.kind,
    status: a.status,
    usdValue: a.usdValue,
    thresholdUsd: a.thresholdUsd,
    requestedAt: a.requestedAt,
    expiresAt: a.expiresAt,
    decidedAt: a.decidedAt,
    decidedBy: a.decidedBy,
    reason: a.reason,
    rule: a.rule ?? null,
    operation: { id: op.id, kind: op.kind, status: op.status, txHash: op.txHash, error: op.error, ...summaryOf(op) },
  }
}
export type Approval = ReturnType<typeof approvalView>

async function owned(deps: Pick<ApprovalPorts, 'operations'>, accountId: string, approvalId: string) {
  const op = await deps.operations.get(approvalId)
  if (!op || op.accountId !== accountId) throw new NotFoundError('Approval')
  return op
}

const approvalCursor = z.tuple([z.string().max(40), z.string().max(200)])

/**
 * A page of the account's approvals, newest request first (`status` filters: `pending` are those
 * still waiting), and `nextCursor` (null on the last page): the `[requestedAt, id]` of its last
 * one, so an approval requested meanwhile never shifts the pages after it.
 */
export async function listApprovals(deps: Pick<ApprovalPorts, 'operations' | 'agentOwned'>, { accountId, query }: { accountId: string; query: ListApprovalsQuery }) {
  // An agent filter naming an agent the account does not own is a 404, as every route addressing it.
  if (query.agentId !== undefined && !(await deps.agentOwned(accountId, query.agentId))) throw new NotFoundError('Agent')
  const after = query.cursor === undefined ? undefined : decodeTupleCursor(query.cursor, approvalCursor)
  const ops = await deps.operations.list(accountId, { status: query.status, agentId: query.agentId, limit: query.limit + 1, after })
  const page = ops.slice(0, query.limit)
  const last = page.at(-1)
  const nextCursor = ops.length > query.limit && last ? encodeTupleCursor([last.approval.requestedAt, last.id]) : null
  return { approvals: page.map(approvalView), nextCursor }
}

export async function getApproval(deps: Pick<ApprovalPorts, 'operations'>, { accountId, approvalId }: { accountId: string; approvalId: string }) {
  return approvalView(await owned(deps, accountId, approvalId))
}

export type DecideApprovalInput = { accountId: string; approvalId: string; decision: 'approve' | 'reject'; decidedBy: string; body: DecideApprovalBody }

/**
 * An owner's decision on a waiting move. A rejection fails it (nothing sent). An approval checks
 * again what may have changed while it waited: the agent's kill switch (`policy_violation`) and,
 * for a swap, the price at the latest block (`price_moved` when it moved beyond the swap's
 * slippage, see recheckSwap.ts); the move then fails with that error, or is submitted. The
 * decision (who, when, the reason) is kept on the approval and in the operation's journal.
 *
 * @example
 * await decideApproval(deps, { accountId, approvalId, decision: 'approve', decidedBy: 'key:...', body: {} })
 */
export async function decideApproval(deps: ApprovalPorts, input: DecideApprovalInput) {
  const op = await owned(deps, input.accountId, input.approvalId)
  if (op.approval.status !== 'pending') throw new ApprovalDecidedError(op.approval)
  const reason = input.body.reason ?? null
  if (input.decision === 'reject') {
    return approvalView(await decided(deps, op, { type: 'approval.reject', by: input.decidedBy, reason }))
  }
  const paused = await deps.agentPaused(input.accountId, op.agentId)
  const rejected = paused ? undefined : await policyRejection(deps, input.accountId, op)
  const check = paused
    ? { failure: { code: 'policy_violation', message: 'The agent is paused by its policy kill switch (policy rule "paused"); nothing was sent.' } }
    : rejected ?? ((await deps.recheck[op.kind]?.(op.params)) ?? {})
  return approvalView(await decided(deps, op, { type: 'approval.approve', by: input.decidedBy, reason, params: check.params, failure: check.failure }))
}

/**
 * Sends the decision; when the operation no longer waits because another decision (or the
 * expiry) won the race since it was read, 409 `approval_decided` as for one decided before.
 */
async function decided(deps: Pick<ApprovalPorts, 'operations'>, op: ApprovalOperation, decision: ApprovalDecision) {
  try {
    return await deps.operations.decide(op.id, decision)
  } catch (err) {
    if (!(err instanceof ServiceError) || err.code !== 'invalid_state') throw err
    const now = await deps.operations.get(op.id)
    if (now && now.approval.status !== 'pending') throw new ApprovalDecidedError(now.approval)
    throw err
  }
}

/**
 * The owners' policies evaluated again at approval, on the facts the move was recorded with (a
 * rule added or a window filled while it waited): a reject fails it with `policy_violation`
 * naming the rule, nothing sent.
 */
async function policyRejection(deps: Pick<ApprovalPorts, 'policies'>, accountId: string, op: ApprovalOperation) {
  if (!deps.policies || !op.policy) return undefined
  const d = await deps.policies.decide({ accountId, agentId: op.agentId, opId: op.id, parentId: op.parentId, facts: op.policy.facts })
  if (d.decision !== 'reject' || !d.rule) return undefined
  const message = `Rejected at approval by the ${d.rule.scope} policy's rule "${d.rule.name}" (${d.matched[0]?.reason ?? 'matched'}); nothing was sent.`
  return { failure: { code: 'policy_violation', message } }
}

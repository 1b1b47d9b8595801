import { IdempotencyKeyReusedError, NotFoundError } from '../errors.ts'
import type { WalletOpView, WalletPorts } from './ports.ts'
import { resolveTransfer, type ResolveTransferDeps, type TransferRequest } from './resolveTransfer.ts'
import { transferAmount, transferMatches, transferParamsOf } from './walletRules.ts'
import { approvalUnder, policyStamp } from '../policies/policyGate.ts'

export type TransferFundsDeps = ResolveTransferDeps & Pick<WalletPorts, 'operations'>
/** The request, and the operation id (the Idempotency-Key's resource id, or a tool call's: a retry finds its transfer). */
export type TransferFundsInput = TransferRequest & { operationId: string; /** A chat turn or run the transfer is made for: it hears the end as its child. */ parentId?: string | undefined }

/**
 * Transfers from an agent wallet, only to an address on that agent's whitelist whose hold has
 * passed, within its policy, as a durable `transfer` wallet operation through the wallet's
 * transaction outbox. Answers when the operation ended (waiting on the runtime's commits), or
 * with its pending state after the wait.
 *
 * @example
 * const t = await transferFunds(deps, { accountId, agentId, to, token: 'USDC', amount: '25', operationId: randomUUID() })
 */
export async function transferFunds(deps: TransferFundsDeps, input: TransferFundsInput) {
  const agent = await deps.agents.getOwned(input.accountId, input.agentId)
  // A retry (same key) after a crash answers with the transfer already made, before any check
  // that the first one changed the outcome of (balance, daily cap).
  const prior = await deps.operations.find(input.operationId)
  if (prior) {
    if (prior.accountId !== input.accountId || !prior.isTransfer) throw new NotFoundError('Operation')
    // The key's first request may have failed after its transfer was made (so the key was not
    // kept): a retry with another body must not be answered with this transfer as if it were its own.
    const token = await deps.tokens.resolve(input.token)
    const same = token && transferMatches(prior, { agentId: input.agentId, params: transferParamsOf(token, transferAmount(input.amount, token), input.to) })
    if (!same) throw new IdempotencyKeyReusedError()
    const view = await deps.operations.waitEnd(input.operationId, input.parentId ? 0 : undefined)
    if (!view) throw new NotFoundError('Operation')
    return transferResource(view, { symbol: token.symbol, params: prior.params, amount: input.amount, valueUsd: prior.usdValue })
  }
  const t = await resolveTransfer(deps, input, agent)
  const view = await deps.operations.start({
    opId: input.operationId,
    accountId: input.accountId,
    agentId: agent.id,
    params: t.params,
    usdValue: t.valueUsd,
    checkSpend: t.checkSpend,
    parentId: input.parentId,
    // Above the policy's approval threshold it waits for an owner (202 `awaiting_approval`).
    approval: approvalUnder(t.decision, agent.policy, { opId: input.operationId, usdValue: t.valueUsd, now: Date.now() }),
    policy: policyStamp(t.decision, t.facts),
  })
  return transferResource(view, { symbol: t.token.symbol, params: t.params, amount: input.amount, valueUsd: t.valueUsd })
}

/** The transfer as the API shows it: the wallet operation (status, tx hash, error) and what it moves. */
function transferResource(view: WalletOpView, t: { symbol: string; params: { token: string; to: string }; amount: string; valueUsd: string }) {
  return { ...view, token: t.symbol, tokenAddress: t.params.token, to: t.params.to, amount: t.amount, valueUsd: t.valueUsd }
}
export type Transfer = ReturnType<typeof transferResource>

import type pg from 'pg'
import { NotFoundError } from '../../domain/errors.ts'
import type { SwapOperations, WalletOpView } from '../../domain/swaps/ports.ts'
import type { TransferOperations, TransferParams } from '../../domain/wallet/ports.ts'
import type { ClaimOperations } from '../../domain/fees/ports.ts'
import { claimQuote } from '../../adapters/db/swapQuote.store.ts'
import { assertNoneInFlight, reserveSpend, spentTodayUsd } from '../../adapters/db/walletOp.store.ts'
import { parentBudgetRefusal } from '../../adapters/db/automations.store.ts'
import { marketGuardError } from '../../adapters/db/marketGuard.ts'
import { AutomationBudgetExhaustedError } from '../../domain/automations/errors.ts'
import type { ActorRuntime } from '../runtime/index.ts'
import type { WalletOpContext, WalletOpInput } from './walletOp.machine.ts'
import { childOfRunningEffect } from '../runtime/index.ts'
import type { PolicyFacts, PolicyGate } from '../../domain/policies/ports.ts'
import type { PolicyDecision } from '../../domain/policies/ownerPolicyRules.ts'
import { approvalUnder, policyStamp, refuseRejected } from '../../domain/policies/policyGate.ts'
import { createPolicyGate } from './policyGate.ts'

/** How long an HTTP request waits for its operation to end before answering it pending (202). */
const WAIT_MS = 20_000

/** What starting a wallet operation takes: the machine's input plus the checks made under the agent's lock. */
export type WalletOpStart = WalletOpInput & {
  /** USD value recorded toward the agent's 24-hour spend. */
  usdValue: string
  /** Called with the agent's spend so far, under the lock; throws to refuse. */
  checkSpend?: ((spentTodayUsd: string, decision?: PolicyDecision) => void) | undefined
  /** At most one operation of this kind per agent in flight (a fee claim): else 409 `<kind>_in_progress`. */
  exclusive?: boolean | undefined
  /** Writes made in the transaction that records the operation, under the lock (e.g. consuming a quote); throws to refuse. */
  claim?: ((db: pg.PoolClient) => Promise<void>) | undefined
  /** The actor the operation is started for (a chat turn, a run): it becomes its child and hears its end. */
  parentId?: string | undefined
}

type Deps = { pool: pg.Pool; runtime: ActorRuntime; policies?: PolicyGate | undefined }

const POLICY_KINDS: Record<string, PolicyFacts['kind']> = { swap: 'swap', transfer: 'transfer', claim: 'fee_claim' }

/** What the policies see of an operation whose use case gave no facts: its kind and USD value. */
const factsOf = (input: WalletOpStart): PolicyFacts =>
  input.policy?.facts ?? { kind: POLICY_KINDS[input.kind] ?? 'swap', tokensIn: [], tokensOut: [], usdValue: input.usdValue }

/**
 * Starts a wallet operation (id from the idempotency key, so a retry finds it) and waits for
 * it to end, up to `waitMs`; answers with whatever state it reached. The spend reservation, the
 * caller's claim (a quote consumed) and the actor are written in one transaction: an operation
 * is recorded with its actor or not at all. With `parentId` (a chat turn, a run, an automation)
 * the operation is that actor's child, which hears its end in its inbox: nothing waits here.
 * Started by an effect of that parent (a model's tool call, a firing), the reservation is made
 * at once and the actor is created with the effect's outcome, in the commit of the parent's
 * transition that records it (see effectScope.ts).
 *
 * @example
 * const op = await runWalletOp({ pool, runtime }, { opId, accountId, agentId, kind: 'transfer', params, usdValue: '12.50' })
 */
export async function runWalletOp({ pool, runtime }: Deps, input: WalletOpStart, { waitMs = WAIT_MS }: { waitMs?: number } = {}): Promise<WalletOpView> {
  const existing = await runtime.get(input.opId)
  if (existing && (existing.accountId !== input.accountId || existing.kind.kind !== 'walletop')) throw new NotFoundError('Operation')
  // A listed or sold agent's money move is refused by the database (the market's guard).
  const child = existing ? undefined : await createWalletOp({ pool, runtime }, input).catch(marketGuardError(input.kind))
  if (child) return walletOpView(child)
  // Woken by the runtime's commits of this operation, not by reading it in a loop.
  const entry = await runtime.waitFor(input.opId, walletOpSettled, input.parentId ? 0 : waitMs)
  if (!entry) throw new NotFoundError('Operation')
  return walletOpView(entry)
}

/**
 * Reserves the spend (under the agent's lock) and creates the operation's actor in the same
 * transaction; a concurrent twin's creation wins. A child of the running effect's actor is
 * created with that effect's outcome instead: answered as it will be (undefined otherwise).
 */
async function createWalletOp({ pool, runtime, policies = createPolicyGate(pool) }: Deps, input: WalletOpStart) {
  const { usdValue: _, checkSpend: __, exclusive: ___, claim: ____, parentId = null, ...machineInput } = input
  const args = { id: input.opId, accountId: input.accountId, input: machineInput as WalletOpInput, parentId }
  const asChild = childOfRunningEffect(parentId)
  let underLock: PolicyDecision | undefined
  try {
    const entry = await reserveSpend(pool, {
      id: input.opId, accountId: input.accountId, agentId: input.agentId, kind: input.kind, usdValue: input.usdValue,
      // Made after `before`: with the owners' policies' decision made there, under the same lock.
      checkSpend: input.checkSpend && ((spent: string) => input.checkSpend!(spent, underLock)),
      parentId,
      before: async (db) => {
        if (input.exclusive) await assertNoneInFlight(db, { agentId: input.agentId, kind: input.kind, exceptId: input.opId })
        // An automation's max_spend_usd (the parent is the automation, or a run it started), checked under the same lock as the agent's daily cap.
        const refusal = parentId ? await parentBudgetRefusal(db, { parentId, opId: input.opId, usdValue: input.usdValue }) : null
        if (refusal) throw new AutomationBudgetExhaustedError(refusal)
        // The owners' policies again, under the agent's lock (a window's spend is counted with the concurrent moves): a reject refuses, nothing is signed.
        const facts = factsOf(input)
        const decision = await policies.decide({ accountId: input.accountId, agentId: input.agentId, opId: input.opId, parentId, facts }, db)
        underLock = decision
        refuseRejected(decision)
        args.input.policy = policyStamp(decision, facts)
        if (decision.decision === 'require_approval' && !args.input.approval) args.input.approval = approvalUnder(decision, null, { opId: input.opId, usdValue: input.usdValue, now: Date.now() })
        await input.claim?.(db)
      },
      after: asChild ? undefined : (db) => runtime.create('walletop', args, db),
    })
    if (asChild) return runtime.createWithOutcome(asChild, 'walletop', { ...args, parentId: asChild.actorId })
    if (entry) runtime.afterExternalCommit(entry)
  } catch (err) {
    // The same operation created at the same moment by a twin request: that one stands.
    if ((err as { code?: string }).code !== '23505') throw err
  }
  return undefined
}

/** A wallet operation has ended: confirmed or failed. */
export const walletOpEnded = (entry: { status: string }) => entry.status === 'confirmed' || entry.status === 'failed'

/** What an HTTP request waits for: the operation's end, or its wait for an owner's approval (answered 202 at once). */
export const walletOpSettled = (entry: { status: string }) => walletOpEnded(entry) || entry.status === 'awaiting_approval'

/** The operation as the API shows it: status, transaction hash, and the planner's result. */
export function walletOpView(entry: { id: string; status: string; snapshot: { context: unknown } }): WalletOpView {
  const c = entry.snapshot.context as WalletOpContext
  const approval = c.approval ? { approvalId: c.approval.id, approval: c.approval } : {}
  const policy = c.policy ? { policy: { decision: c.policy.decision, rule: c.policy.rule } } : {}
  return { id: entry.id, agentId: c.agentId, kind: c.kind, status: entry.status, txHash: c.txHash, ...(c.result ?? {}), ...approval, ...policy, error: c.error }
}

/**
 * The actor under `opId` read as a wallet operation (swap, transfer and claim look a retried
 * request's operation up this way): `opKind` is undefined when the actor is not one.
 */
export async function findWalletOp<P>(runtime: Pick<ActorRuntime, 'get'>, opId: string) {
  const entry = await runtime.get(opId)
  if (!entry) return undefined
  const ctx = entry.snapshot.context as WalletOpInput & { params: P }
  const opKind = entry.kind.kind === 'walletop' ? ctx.kind : undefined
  return { accountId: entry.accountId, opKind, agentId: ctx.agentId, params: ctx.params, view: walletOpView(entry) }
}

/**
 * The wallet operation ports of the swap, transfer and fee use cases over the actor runtime:
 * find one by id, start one (recorded and created in one transaction), wait for its end through
 * the runtime's commits (never by reading it in a loop).
 *
 * @example
 * const { swaps, transfers, claims } = createWalletOperations({ pool, runtime, usdValueOf: store.usdValueOf })
 */
export function createWalletOperations(deps: Deps & { usdValueOf(opId: string): Promise<string | undefined> }) {
  const { pool, runtime } = deps
  const waitEnd = async (opId: string, waitMs = WAIT_MS) => {
    const entry = await runtime.waitFor(opId, walletOpSettled, waitMs)
    return entry ? walletOpView(entry) : undefined
  }
  const spent = (agentId: string, exceptId?: string) => spentTodayUsd(pool, agentId, { exceptId })

  const swaps: SwapOperations = {
    spentTodayUsd: spent,
    async find(opId) {
      const op = await findWalletOp<Parameters<SwapOperations['start']>[0]['params']>(runtime, opId)
      return op && { ...op, isSwap: op.opKind === 'swap' }
    },
    start: ({ consumeQuoteId, ...p }) =>
      runWalletOp(deps, {
        ...p,
        kind: 'swap',
        // The quote is consumed with the swap's record, in one transaction: it executes once.
        claim: consumeQuoteId ? (db) => claimQuote(db, { quoteId: consumeQuoteId, opId: p.opId }) : undefined,
      }),
    waitEnd,
  }

  const transfers: TransferOperations = {
    spentTodayUsd: spent,
    async find(opId) {
      const op = await findWalletOp<TransferParams>(runtime, opId)
      return op && { ...op, isTransfer: op.opKind === 'transfer', usdValue: (await deps.usdValueOf(opId)) ?? '0.00' }
    },
    start: (p) => runWalletOp(deps, { ...p, kind: 'transfer' }),
    waitEnd,
  }

  const claims: ClaimOperations = {
    assertNoneInFlight: (agentId, exceptId) => assertNoneInFlight(pool, { agentId, kind: 'claim', exceptId }),
    async find(opId) {
      const op = await findWalletOp<WalletOpInput['params']>(runtime, opId)
      return op && { ...op, isWalletOp: op.opKind !== undefined }
    },
    // A claim pays the agent's own payout wallet: it spends nothing, so it counts 0 toward the daily cap.
    // Exclusive: a second claim started beside this one would find the same fees and revert.
    start: (p) => runWalletOp(deps, { ...p, kind: 'claim', usdValue: '0', exclusive: true }),
  }

  return { swaps, transfers, claims }
}

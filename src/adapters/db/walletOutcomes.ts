import type pg from 'pg'
import type { SwapFill } from '../../domain/wallet/ports.ts'
import type { LedgerOp } from '../../domain/wallet/ledgerOps.ts'
import type { RuntimeReadModel } from '../../actors/runtime/index.ts'
import { recordedLedgerRows, type LedgerScope, type ReceiveRow, type RecordedOpRow } from './wallet.store.ts'

/** What the wallet's outcomes need of the runtime: the operations' and launches' actors, and the agents' states. */
export type WalletActorReads = {
  actorsInStates: RuntimeReadModel['actorsInStates']
  /** The state of each agent among `ids` (absent: no such agent), in one read. */
  agentStates: (ids: readonly string[]) => Promise<ReadonlyMap<string, string>>
}

type Ctx = { params: Record<string, string | undefined>; result: Record<string, unknown> | null; kind?: string }
type OpRow = RecordedOpRow & { at: string | Date; ctx: Ctx }
/** A ledger operation with the block it was mined in (null: unknown, kept in recorded order). */
type Sorted = { op: LedgerOp; block: bigint | null }
type Claimed = { token: string; amount: string; to: string; valueUsd?: string | null }
type Launched = { gasUsd?: string; allocation: string; seed: { token: string; amount: string } | null }

/** A wallet operation confirmed, a launch live: the states whose outcomes count. */
const DONE = { walletop: ['confirmed'], launch: ['live'] } as const

/**
 * What an agent's wallet operations and launches came to, read from their actors through the
 * runtime's read model (`runtime.read.actorsInStates`: confirmed operations, live launches, by
 * the agent named in their context) and joined with what the service recorded of them (the
 * operation's USD value and time, the launched token): the portfolio's tokens, the cost basis's
 * swaps, the PnL ledger. The recorded rows and the actors are read together. (The tokens its
 * swaps bought are the ledger's swaps' `tokenOut`: the portfolio takes them from there.)
 *
 * @example
 * const outcomes = createWalletOutcomes(pool, { actorsInStates: runtime.read.actorsInStates, agentStates })
 * const fills = await outcomes.confirmedSwaps(agentId)
 */
export function createWalletOutcomes(pool: pg.Pool, actors: WalletActorReads) {
  return {
    /** The agent's confirmed swaps, oldest first: tokens and base-unit amounts, and the USD paid. */
    async confirmedSwaps(agentId: string): Promise<SwapFill[]> {
      const done = await actors.actorsInStates<Ctx>({ states: { walletop: DONE.walletop }, named: { key: 'agentId', values: [agentId] } })
      return done.filter((a) => a.context.kind === 'swap').map(({ context: { params: p, result } }) => {
        const r = result as Record<string, string | undefined> | null
        return { tokenIn: p.tokenIn, tokenOut: p.tokenOut, amountIn: p.amountIn, amountOut: r?.amountOutBaseUnits, valueInUsd: p.valueInUsd }
      })
    },

    /**
     * The agent's PnL ledger (pnlRules.ts): its confirmed swaps, transfers out and creator-fee
     * claims, its live launches, and the transfers into its wallet the indexer saw, in block
     * order (a transfer in first within a block). `at` is when an operation was recorded or a
     * transfer's block time, kept from going backwards in that order.
     */
    async ledgerOps(agentId: string): Promise<LedgerOp[]> {
      return (await ledgerRows(pool, actors, { agentId })).get(agentId)?.ops ?? []
    },

    /** Every live agent's ledger (as ledgerOps), with its name (the PnL leaderboard), of agents of one mode (live or paper). */
    async allLedgerOps(mode: 'live' | 'paper' = 'live'): Promise<Array<{ agentId: string; name: string; ops: LedgerOp[] }>> {
      return [...(await ledgerRows(pool, actors, { mode })).values()]
    },
  }
}
export type WalletOutcomes = ReturnType<typeof createWalletOutcomes>

const byAgentTimeId = (a: { agent_id: string; us: bigint; ord: string }, b: { agent_id: string; us: bigint; ord: string }) =>
  a.agent_id < b.agent_id ? -1 : a.agent_id > b.agent_id ? 1 : a.us < b.us ? -1 : a.us > b.us ? 1 : a.ord < b.ord ? -1 : a.ord > b.ord ? 1 : 0

/**
 * The ledgers of one agent (or of every agent of a mode not deleted): wallet operations that
 * confirmed and launches that went live, in recorded order (by agent, time, id), transfers in by
 * block, merged (mergeLedger).
 */
async function ledgerRows(pool: pg.Pool, actors: WalletActorReads, scope: LedgerScope) {
  const named = 'agentId' in scope ? { key: 'agentId', values: [scope.agentId] } : undefined
  const [recorded, done] = await Promise.all([recordedLedgerRows(pool, scope), actors.actorsInStates<Ctx>({ states: DONE, named })])
  const outcome = new Map(done.map((a) => [a.id, a]))
  let rows = recorded.ops.flatMap((r) => {
    const a = outcome.get(r.ord)
    if (!a || a.kind !== (r.kind === 'launch' ? 'launch' : 'walletop')) return []
    // A launch is placed at its actor's creation; an operation at its recording.
    const row: OpRow = r.kind === 'launch' ? { ...r, at: a.createdAt, ctx: a.context } : { ...r, at: r.at!, ctx: a.context }
    return [{ row, agent_id: r.agent_id, us: r.kind === 'launch' ? a.createdMicros : BigInt(r.at_us!), ord: r.ord }]
  }).sort(byAgentTimeId).map((x) => x.row)
  let ins = recorded.ins
  if (!named) {
    // Every agent of the mode: those deleted are left out.
    const states = await actors.agentStates([...new Set([...rows, ...ins].map((r) => r.agent_id))])
    const live = (r: { agent_id: string }) => states.has(r.agent_id) && states.get(r.agent_id) !== 'deleted'
    rows = rows.filter(live)
    ins = ins.filter(live)
  }
  const by = new Map<string, { agentId: string; name: string; ops: Sorted[]; ins: Sorted[] }>()
  const entry = (agentId: string, name: string) => {
    const e = by.get(agentId) ?? { agentId, name, ops: [], ins: [] }
    by.set(agentId, e)
    return e
  }
  for (const r of rows) entry(r.agent_id, r.name).ops.push(opOf(r))
  for (const r of ins) entry(r.agent_id, r.name).ins.push(receiveOf(r))
  return new Map([...by].map(([id, e]) => [id, { agentId: e.agentId, name: e.name, ops: mergeLedger(e.ops, e.ins) }]))
}

function opOf({ kind, usd, at, wallet, token, ctx }: OpRow): Sorted {
  const p = ctx.params
  const r = (ctx.result ?? {}) as Record<string, string | undefined>
  const when = new Date(at)
  if (kind === 'launch') {
    const c = ctx as unknown as { blockNumber?: string | null; ledger?: Launched | null }
    const l = c.ledger
    return {
      op: { kind, at: when, gasUsd: l?.gasUsd, token: token ?? '', allocation: l?.allocation ?? '0', seed: l?.seed ?? null },
      block: c.blockNumber ? BigInt(c.blockNumber) : null,
    }
  }
  const block = r.blockNumber ? BigInt(r.blockNumber) : null
  if (kind === 'claim') {
    const claimed = ((ctx.result?.claimed ?? []) as Claimed[]).map((c) => ({ token: c.token, amount: c.amount, valueUsd: c.valueUsd ?? null, held: c.to === wallet }))
    return { op: { kind, at: when, gasUsd: r.gasUsd, claimed }, block }
  }
  const op: LedgerOp = kind === 'swap'
    ? { kind, at: when, gasUsd: r.gasUsd, tokenIn: p.tokenIn, tokenOut: p.tokenOut, amountIn: p.amountIn, amountOut: r.amountOutBaseUnits, valueInUsd: p.valueInUsd }
    : { kind, at: when, gasUsd: r.gasUsd, token: p.token ?? '', amount: p.amount ?? '0', valueUsd: usd ?? '0' }
  return { op, block }
}

const receiveOf = (r: ReceiveRow): Sorted => ({
  op: { kind: 'receive', at: new Date(r.at), token: r.token_address, amount: r.amount, valueUsd: r.usd },
  block: BigInt(r.block_number),
})

/** Wallet operations (recorded order) and transfers in (block order) merged by block; `at` never goes backwards. */
function mergeLedger(ops: Sorted[], ins: Sorted[]): LedgerOp[] {
  const out: LedgerOp[] = []
  let i = 0
  let j = 0
  while (i < ops.length || j < ins.length) {
    const a = ops[i]
    const b = ins[j]
    const takeIn = b !== undefined && (a === undefined || (a.block !== null && b.block! <= a.block))
    out.push(takeIn ? b.op : a!.op)
    if (takeIn) j++
    else i++
  }
  let latest = 0
  for (const op of out) {
    const t = op.at?.getTime() ?? 0
    if (t < latest) op.at = new Date(latest)
    else latest = t
  }
  return out
}


import type { Memo } from '../market/ports.ts'
import { pnlLedger } from './pnlRules.ts'
import type { LedgerOp } from './ledgerOps.ts'
import { centsToUsd } from './walletRules.ts'
import { usdCents } from '../agents/policy.ts'

export type GetPnlLeaderboardDeps = {
  ledgers: { allLedgerOps(mode: 'live' | 'paper'): Promise<Array<{ agentId: string; name: string; ops: LedgerOp[] }>> }
  memo: Memo
}
/** `mode`: live agents (the default) or paper agents, each ranked apart. */
export type GetPnlLeaderboardInput = { limit: number; offset: number; mode?: 'live' | 'paper' | undefined }

/** A return in basis points as a percent with two decimals ("12.34", "-0.50"). */
const percentOf = (bps: bigint) => `${bps < 0n ? '-' : ''}${(bps < 0n ? -bps : bps) / 100n}.${String((bps < 0n ? -bps : bps) % 100n).padStart(2, '0')}`

/**
 * Agents ranked by the PnL they realised (pnlRules.ts, from their ledgers: swaps, transfers in
 * and out, launches, claims, gas), then by operations, then id. Unrealised PnL is not ranked:
 * it needs every agent's balances read on chain. Live and paper agents are ranked apart (`mode`).
 * Paper agents are ranked by their return: the realised PnL over what was deposited (transfers
 * in, valued when made; `returnPct`, null without a priced deposit, ranked last), so a paper
 * agent's place is its trading's, not its deposits' size (paper entries carry `depositedUsd` and
 * `returnPct`). Public fields only; the ranking is
 * shared for a moment.
 *
 * @example
 * const { leaderboard } = await getPnlLeaderboard(deps, { limit: 20, offset: 0 })
 * leaderboard[0] // { rank: 1, agentId, name, realisedPnlUsd: '20.00', operations: 3 }
 */
export async function getPnlLeaderboard(deps: GetPnlLeaderboardDeps, { limit, offset, mode = 'live' }: GetPnlLeaderboardInput) {
  const ranked = await deps.memo.cached(`leaderboard:pnl:${mode}`, async () => {
    const agents = await deps.ledgers.allLedgerOps(mode)
    const byDesc = (x: bigint, y: bigint) => (x === y ? 0 : x > y ? -1 : 1)
    return agents
      .map((a) => {
        const cents = [...pnlLedger(a.ops).values()].reduce((s, p) => s + p.realisedCents, 0n)
        const depositedCents = a.ops.reduce((s, o) => (o.kind === 'receive' && o.valueUsd !== null ? s + usdCents(o.valueUsd) : s), 0n)
        return { agentId: a.agentId, name: a.name, operations: a.ops.length, cents, depositedCents, returnBps: depositedCents > 0n ? (cents * 10_000n) / depositedCents : null }
      })
      .sort((x, y) =>
        (mode === 'paper' ? (x.returnBps === null ? (y.returnBps === null ? 0 : 1) : y.returnBps === null ? -1 : byDesc(x.returnBps, y.returnBps)) : 0) ||
        byDesc(x.cents, y.cents) || y.operations - x.operations || (x.agentId < y.agentId ? -1 : 1),
      )
  })
  return {
    sortBy: 'pnl',
    leaderboard: ranked.slice(offset, offset + limit).map((a, i) => ({
      rank: offset + i + 1, agentId: a.agentId, name: a.name, realisedPnlUsd: centsToUsd(a.cents),
      ...(mode === 'paper' ? { depositedUsd: centsToUsd(a.depositedCents), returnPct: a.returnBps === null ? null : percentOf(a.returnBps) } : {}),
      operations: a.operations,
    })),
    total: ranked.length,
    nextOffset: offset + limit < ranked.length ? offset + limit : null,
  }
}

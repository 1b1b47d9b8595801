import type { Memo } from '../market/ports.ts'
import { pnlLedger } from './pnlRules.ts'
import type { LedgerOp } from './ledgerOps.ts'
import { centsToUsd } from './walletRules.ts'

export type GetPnlLeaderboardDeps = {
  ledgers: { allLedgerOps(mode: 'live' | 'paper'): Promise<Array<{ agentId: string; name: string; ops: LedgerOp[] }>> }
  memo: Memo
}
/** `mode`: live agents (the default) or paper agents, each ranked apart. */
export type GetPnlLeaderboardInput = { limit: number; offset: number; mode?: 'live' | 'paper' | undefined }

/**
 * Agents ranked by the PnL they realised (pnlRules.ts, from their ledgers: swaps, transfers in
 * and out, launches, claims, gas), then by operations, then id. Unrealised PnL is not ranked:
 * it needs every agent's balances read on chain. Live and paper agents are ranked apart (`mode`). Public fields only; the ranking is shared for a
 * moment.
 *
 * @example
 * const { leaderboard } = await getPnlLeaderboard(deps, { limit: 20, offset: 0 })
 * leaderboard[0] // { rank: 1, agentId, name, realisedPnlUsd: '20.00', operations: 3 }
 */
export async function getPnlLeaderboard(deps: GetPnlLeaderboardDeps, { limit, offset, mode = 'live' }: GetPnlLeaderboardInput) {
  const ranked = await deps.memo.cached(`leaderboard:pnl:${mode}`, async () => {
    const agents = await deps.ledgers.allLedgerOps(mode)
    return agents
      .map((a) => ({ agentId: a.agentId, name: a.name, operations: a.ops.length, cents: [...pnlLedger(a.ops).values()].reduce((s, p) => s + p.realisedCents, 0n) }))
      .sort((x, y) => (x.cents === y.cents ? 0 : x.cents > y.cents ? -1 : 1) || y.operations - x.operations || (x.agentId < y.agentId ? -1 : 1))
  })
  return {
    sortBy: 'pnl',
    leaderboard: ranked.slice(offset, offset + limit).map((a, i) => ({ rank: offset + i + 1, agentId: a.agentId, name: a.name, realisedPnlUsd: centsToUsd(a.cents), operations: a.operations })),
    total: ranked.length,
    nextOffset: offset + limit < ranked.length ? offset + limit : null,
  }
}

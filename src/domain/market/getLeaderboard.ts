import { formatUsd } from '../tokens/priceMath.ts'
import type { QuotePrices } from '../tokens/ports.ts'
import type { MarketPorts, RankingRow } from './ports.ts'
import { feeSumUsd } from './valuation.ts'

export type GetLeaderboardDeps = MarketPorts
export type GetLeaderboardInput = { limit: number; offset: number }
export type RankedAgent = { agentId: string; name: string; usd: bigint; tokens: number }

/**
 * Agents ranked by the creator fees their tokens earned, in USD (indexed fee events; quote
 * assets at today's price, token-side fees at the token's latest price). Public fields only.
 * The ranking is shared by every caller for a moment.
 *
 * @example
 * const { leaderboard, total, nextOffset } = await getLeaderboard(deps, { limit: 20, offset: 0 })
 */
export async function getLeaderboard(deps: GetLeaderboardDeps, { limit, offset }: GetLeaderboardInput) {
  const chainId = deps.prices.deployment?.chainId
  const { ranked, indexedBlock } = await deps.memo.cached('leaderboard', async () => {
    const [prices, rows] = await Promise.all([deps.prices.quotePrices(), deps.stats.ranking(chainId)])
    return { ranked: rankAgents(prices, rows), indexedBlock: await deps.stats.indexedBlock(chainId) }
  })
  const page = ranked.slice(offset, offset + limit)
  return {
    leaderboard: page.map((a, i) => ({ rank: offset + i + 1, agentId: a.agentId, name: a.name, earnedUsd: formatUsd(a.usd), tokensLaunched: a.tokens })),
    total: ranked.length,
    nextOffset: offset + limit < ranked.length ? offset + limit : null,
    indexedBlock,
  }
}

/**
 * Agents by creator fees earned (USD), then tokens launched, then id: one entry per agent from
 * its tokens' rows.
 *
 * @example
 * rankAgents(prices, [{ agentId: 'a', name: 'alpha', quoteSymbol: 'USDC', quote: 1_500_000n, token: 0n, price: null }])
 * // [{ agentId: 'a', name: 'alpha', usd: 1.5e18, tokens: 1 }]
 */
export function rankAgents(prices: QuotePrices, rows: RankingRow[]): RankedAgent[] {
  const byAgent = new Map<string, RankedAgent>()
  for (const r of rows) {
    const a = byAgent.get(r.agentId) ?? { agentId: r.agentId, name: r.name, usd: 0n, tokens: 0 }
    byAgent.set(r.agentId, a)
    a.usd += feeSumUsd(prices, r)
    a.tokens++
  }
  return [...byAgent.values()].sort(
    (x, y) => (x.usd === y.usd ? 0 : x.usd > y.usd ? -1 : 1) || y.tokens - x.tokens || (x.agentId < y.agentId ? -1 : 1),
  )
}

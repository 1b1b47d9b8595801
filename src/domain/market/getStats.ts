import { formatUsd } from '../tokens/priceMath.ts'
import type { MarketPorts } from './ports.ts'
import { feeSumUsd, valueOf } from './valuation.ts'

export type GetStatsDeps = MarketPorts

/**
 * Platform counters: agents, running agents, tokens launched by agents and indexed, trades and
 * volume of the last 24 h and creator fees earned, in USD at the quote assets' prices now.
 * Shared by every caller for a moment.
 *
 * @example
 * const { agents, volume24hUsd } = await getStats(deps)
 */
export function getStats(deps: GetStatsDeps) {
  return deps.memo.cached('stats', async () => {
    const chainId = deps.prices.deployment?.chainId
    const [prices, counts] = await Promise.all([deps.prices.quotePrices(), deps.stats.platformCounts(chainId)])
    let volumeUsd = 0n
    let trades = 0
    for (const v of counts.volume24h) {
      volumeUsd += valueOf(prices, { amount: v.volume, asset: 'quote', quoteSymbol: v.quoteSymbol, price: null }) ?? 0n
      trades += v.trades
    }
    const feesUsd = counts.feesEarned.reduce((sum, f) => sum + feeSumUsd(prices, f), 0n)
    return {
      agents: counts.agents,
      runningAgents: counts.runningAgents,
      tokensLaunched: counts.tokensLaunched,
      tokensIndexed: counts.tokensIndexed,
      trades24h: trades,
      volume24hUsd: formatUsd(volumeUsd),
      feesEarnedUsd: formatUsd(feesUsd),
      indexedBlock: await deps.stats.indexedBlock(chainId),
    }
  })
}

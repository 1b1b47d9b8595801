import type { FeePorts } from './ports.ts'
import { sumFeeTotals } from './feeRules.ts'

export type GetFeeStatsDeps = Pick<FeePorts, 'prices' | 'stats'>

/**
 * Platform fee totals by venue from the indexed trades (creator and platform halves, in USD:
 * quote-side fees at the quote asset's price now, token-side fees at the token's latest indexed
 * price), all time and over the last 24 hours.
 *
 * @example
 * const { venues, totals, indexedBlock } = await getFeeStats(deps)
 */
export async function getFeeStats(deps: GetFeeStatsDeps) {
  const chainId = deps.prices.deployment?.chainId
  const prices = await deps.prices.quotePrices()
  const rows = await deps.stats.feeTotals(chainId)
  return { ...sumFeeTotals(prices, rows), indexedBlock: await deps.stats.indexedBlock(chainId) }
}

import { tokenAmountUsd, usdOf } from '../tokens/priceMath.ts'
import type { PricesAtBlock } from '../tokens/ports.ts'
import type { CreatorToken } from './ports.ts'

/**
 * usd18 of an amount of creator fees of a token: its quote side at the quote asset's price, its
 * token side (venue-b) at the token's market price, both at the block of `at`; null when the
 * quote asset has no price.
 *
 * @example
 * const usd = await feeUsd(at, 18, token, unclaimedQuote, unclaimedToken)
 */
export async function feeUsd(
  at: PricesAtBlock,
  decimals: number | undefined,
  t: CreatorToken,
  quoteAmount: bigint,
  tokenAmount: bigint,
): Promise<bigint | null> {
  const q = await at.quote(t.quoteSymbol)
  if (!q || decimals === undefined) return null
  let usd = usdOf(quoteAmount, decimals, q.usd18)
  if (tokenAmount > 0n) {
    const m = await at.launched({ address: t.address, venue: t.venue, quoteSymbol: t.quoteSymbol, poolAddress: t.poolAddress })
    usd += tokenAmountUsd(tokenAmount, m.price, decimals, q.usd18)
  }
  return usd
}

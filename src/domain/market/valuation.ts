import { tokenAmountUsd, usdOf } from '../tokens/priceMath.ts'
import type { QuotePrices } from '../tokens/ports.ts'

/**
 * usd18 of an amount of fees or volume taken from the indexer's tables, or null when its quote
 * asset has no price. Fees arrive in the quote asset (venue-a, venue-b buys) or in the launched
 * token itself (venue-b sells): `asset` says which; token amounts are valued at the token's
 * `price` (quote base units per whole token times PRICE_SCALE; null when never indexed: 0).
 *
 * @example
 * valueOf(prices, { amount: 5n * 10n ** 15n, asset: 'quote', quoteSymbol: 'ETH', price: null }) // 15 USD at $3,000
 */
export function valueOf(
  prices: QuotePrices,
  { amount, asset, quoteSymbol, price }: { amount: bigint; asset: 'quote' | 'token'; quoteSymbol: string; price: bigint | null },
): bigint | null {
  const unit = prices.usd18.get(quoteSymbol)
  const decimals = prices.decimals.get(quoteSymbol)
  if (unit === undefined || decimals === undefined) return null
  if (asset === 'quote') return usdOf(amount, decimals, unit)
  return price === null ? 0n : tokenAmountUsd(amount, price, decimals, unit)
}

/** usd18 of a fee sum: its quote side plus its token side at the token's price (unpriced sides count 0). */
export function feeSumUsd(prices: QuotePrices, f: { quoteSymbol: string; quote: bigint; token: bigint; price: bigint | null }): bigint {
  return (
    (valueOf(prices, { amount: f.quote, asset: 'quote', quoteSymbol: f.quoteSymbol, price: f.price }) ?? 0n) +
    (valueOf(prices, { amount: f.token, asset: 'token', quoteSymbol: f.quoteSymbol, price: f.price }) ?? 0n)
  )
}

import { formatAmount, formatPrice, formatUsd, marketCapInQuote, tokenUnitUsd, usdOf } from './priceMath.ts'

/**
 * A launched token's market figures from the indexer's tables: price, market cap, 24 h volume
 * and 24 h change. One definition for the token board, one token, and GET /price.
 */

export type TokenFiguresInput = {
  /** Whole-token supply in base units (18 decimals). */
  totalSupply: bigint
  /** Current price (quote base units per whole token x PRICE_SCALE); null when never priced. */
  price: bigint | null
  /** The indexed price 24 h ago (see src/db/tokenBoard.sql.ts); null when unknown. */
  price24hAgo: bigint | null
  /** Quote base units traded in the last 24 h. */
  volume24h: bigint
  /** The quote asset's decimals (undefined: not a quote asset of this deployment) and USD price (usd18). */
  quoteDecimals: number | undefined
  quoteUsd18: bigint | null
}

/** usd18 of `amount` base units of a quote asset as dollars and cents, or null without a price. */
export const quoteUsd = (amount: bigint, decimals: number | undefined, usd18: bigint | null) =>
  decimals !== undefined && usd18 !== null ? formatUsd(usdOf(amount, decimals, usd18)) : null

/**
 * Price and USD figures of a launched token. `change24h` is the percent change of its price in
 * its quote asset (two decimals, a number), null without both prices.
 *
 * @example
 * // 1e9 tokens, up 12.5% from 1.5e-9 ETH (`open`), 0.1 ETH traded, ETH at $3,000
 * tokenFigures({ totalSupply: 10n ** 27n, price: (open * 9n) / 8n, price24hAgo: open, volume24h: 10n ** 17n, quoteDecimals: 18, quoteUsd18: 3000n * 10n ** 18n })
 * // { priceQuote: '0.0000000016875', priceUsd: '0.0000050625', marketCapUsd: '5062.50', volume24hUsd: '300.00', change24h: 12.5 }
 */
export function tokenFigures({ totalSupply, price, price24hAgo, volume24h, quoteDecimals, quoteUsd18 }: TokenFiguresInput) {
  const priced = price !== null && quoteDecimals !== undefined
  return {
    priceQuote: priced ? formatAmount(price, 18 + quoteDecimals) : null,
    priceUsd: priced && quoteUsd18 !== null ? formatPrice(tokenUnitUsd(price, quoteDecimals, quoteUsd18)) : null,
    marketCapUsd: priced ? quoteUsd(marketCapInQuote(price, totalSupply), quoteDecimals, quoteUsd18) : null,
    volume24hUsd: quoteUsd(volume24h, quoteDecimals, quoteUsd18),
    change24h: price !== null && price24hAgo !== null && price24hAgo > 0n ? Number(((price - price24hAgo) * 10_000n) / price24hAgo) / 100 : null,
  }
}

import { marketCapInQuote } from '../tokens/priceMath.ts'
import { formatAmount, formatPrice, formatUsd, tokenUnitUsd, usdOf } from '../tokens/priceMath.ts'

/**
 * A launched token's market figures from the indexer's tables: price, market cap, 24 h volume
 * and 24 h change. One definition for the token board, one token, and GET /price.
 */

/** Quote base units traded in the last 24 h, as a scalar subquery on alias `t` (needs `t.address`). */
export const VOLUME_24H_SQL = `(select coalesce(sum(tr.quote_amount), 0) from trade tr
  where tr.token_address = t.address and tr.at > now() - interval '24 hours')`

/**
 * The indexed price (PRICE_SCALE) 24 h ago, as a scalar subquery on alias `t` (needs `t.chain_id`,
 * `t.address`, `t.block_number`, `t.created_at`). Snapshots carry blocks, not times: the newest
 * block known to be 24 h old is the token's creation block or a trade's block; the price then is
 * the last snapshot at or before it. A token younger than 24 h is compared with its first price.
 */
export const PRICE_24H_AGO_SQL = `coalesce(
  (select s.price from token_snapshot s where s.chain_id = t.chain_id and s.token_address = t.address
      and s.block_number <= greatest(
        case when t.created_at <= now() - interval '24 hours' then t.block_number end,
        (select max(tr.block_number) from trade tr where tr.token_address = t.address and tr.at <= now() - interval '24 hours'))
    order by s.block_number desc, s.log_index desc limit 1),
  (select s.price from token_snapshot s where s.chain_id = t.chain_id and s.token_address = t.address
    order by s.block_number, s.log_index limit 1))`

export type TokenFiguresInput = {
  /** Whole-token supply in base units (18 decimals). */
  totalSupply: bigint
  /** Current price (quote base units per whole token x PRICE_SCALE); null when never priced. */
  price: bigint | null
  /** The price 24 h ago (see PRICE_24H_AGO_SQL); null when unknown. */
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

import type pg from 'pg'
import type { ChainHandle } from '../../chain/chain.ts'
import { createPriceReader, type PriceReader } from '../../chain/priceReader.ts'
import { tokenAmountUsd, usdOf } from '../tokens/priceMath.ts'

/**
 * USD valuation of fee and volume figures taken from the chain indexer's tables. Fees arrive in
 * the quote asset (venue-a, venue-b buys) or in the launched token itself (venue-b sells): the
 * latter are valued at the token's latest indexed price. Quote assets are valued at their price
 * now (one chain read per request).
 */
export type QuotePrices = { block: bigint | null; usd18: Map<string, bigint>; decimals: Map<string, number> }

/** USD prices of every quote asset in the manifest, read at one block; empty without a chain. */
export async function quotePrices(chain: ChainHandle | undefined, reader?: PriceReader): Promise<QuotePrices> {
  const usd18 = new Map<string, bigint>()
  const decimals = new Map<string, number>()
  if (!chain) return { block: null, usd18, decimals }
  const prices = reader ?? (await createPriceReader(chain))
  for (const [symbol, q] of Object.entries(chain.manifest.quoteAssets)) {
    decimals.set(symbol, q.decimals)
    const p = await prices.quote(symbol)
    if (p) usd18.set(symbol, p.usd18)
  }
  return { block: prices.block, usd18, decimals }
}

/**
 * usd18 of an amount of fees or volume, or null when its quote asset has no price.
 * `asset` says what the amount is denominated in; token amounts need the token's `price`
 * (quote base units per whole token, times PRICE_SCALE; null when never indexed: valued at 0).
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

/** Latest indexed price of a token (PRICE_SCALE), as a lateral subquery on alias `t` (needs `t.chain_id`, `t.address`). */
export const LATEST_PRICE_SQL = `(select s.price from token_snapshot s where s.chain_id = t.chain_id and s.token_address = t.address
  order by s.block_number desc, s.log_index desc limit 1)`

/** The block the indexer has reached on this chain (null before its first pass). */
export async function indexedBlock(pool: pg.Pool, chainId: number | undefined): Promise<number | null> {
  if (chainId === undefined) return null
  const { rows } = await pool.query<{ block_number: string }>(`select block_number from chain_checkpoint where chain_id = $1`, [chainId])
  return rows[0] ? Number(rows[0].block_number) : null
}

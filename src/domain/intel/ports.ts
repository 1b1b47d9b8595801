import type { Memo } from '../market/ports.ts'
import type { TokenPrices, TokenRow } from '../tokens/ports.ts'
import type { Bucket } from './candleRules.ts'
import type { ReferenceAsset } from './intelTokens.ts'

/**
 * What market intelligence needs: the indexer's tables aggregated (src/adapters/db/marketIntel.store.ts),
 * quote asset prices now (for figures that are "now": liquidity, market cap), and a short-lived
 * cache for whole-board answers. Every figure comes from our own index of the chain.
 */

/** A token's last trade before a range (its close), or null. */
export type PrevClose = { close: bigint; closeUsd: bigint | null } | null

export type MoverRow = {
  address: string
  symbol: string
  name: string
  quoteSymbol: string
  verified: boolean
  /** Null for a reference asset (WETH, a stock): no market cap, as /price has none. */
  totalSupply: bigint | null
  /** Latest indexed price (PRICE_SCALE) and real quote reserve of its curve or pool. */
  price: bigint | null
  quoteReserve: bigint | null
  /** The price at the window's start (last trade before it, else the token's first price). */
  priceThen: bigint | null
  /** Quote base units traded in the window. */
  volume: bigint
  trades: number
}

export type AnomalyRow = {
  type: string
  mints: string[]
  description: string
  severity: number
  detectedAt: Date
  blockNumber: number
  details: Record<string, unknown>
}

/** A pool (an AMM pair of a launched token, or a reference asset's USDC pool) with its reserves and the quote volume through it. */
export type PoolRow = {
  token: string
  symbol: string
  pool: string
  quoteSymbol: string
  verified: boolean
  /** Effective price (PRICE_SCALE) and real reserves from the latest pool snapshot. */
  price: bigint
  tokenReserve: bigint
  quoteReserve: bigint
  /** Quote base units swapped through the pool in the last 24 h. */
  volume24h: bigint
  /** Creator fees (quote base units) the FeeLocker accrued for the token in the last 24 h. */
  creatorFees24h: bigint
}

/** Quote flows through launched tokens in the last 24 h, per quote asset and side, from the index. */
export type MacroRow = {
  /**
   * `volume` in quote base units; `usdTimesUnits` = the sum of each trade's quote amount (base
   * units) times its quote's USD price at its block (usd18): usd18 once divided by 10^decimals.
   * Null when a trade had no USD price.
   */
  flows: Array<{ quoteSymbol: string; side: 'buy' | 'sell'; volume: bigint; usdTimesUnits: bigint | null; trades: number }>
  /** The newest indexed trade's time (null: none in 24 h). */
  updatedAt: Date | null
}

export interface IntelStore {
  /** A launched token by address, or a verified one by symbol (case-insensitive). */
  findToken(chainId: number | undefined, mint: string): Promise<TokenRow | undefined>
  /** Buckets of `interval` seconds over [from, to), each with its OHLC in quote and USD (quote with `quoteDecimals`). */
  candles(q: { token: string; interval: number; from: Date; to: Date; quoteDecimals: number }): Promise<{ buckets: Bucket[]; prev: PrevClose }>
  /** The token's newest indexed trade's time (its block's), or null. */
  lastTradeAt(token: string): Promise<Date | null>
  /** Every launched token's row and every reference asset's. */
  movers(q: { chainId: number | undefined; windowSeconds: number; reference: readonly ReferenceAsset[] }): Promise<MoverRow[]>
  anomalies(q: { chainId: number | undefined; since: Date; types: readonly string[] | undefined; limit: number }): Promise<AnomalyRow[]>
  /** Launched tokens' pools and the reference assets'. */
  pools(q: { chainId: number | undefined; reference: readonly ReferenceAsset[] }): Promise<PoolRow[]>
  macro(q: { chainId: number | undefined }): Promise<MacroRow>
}

export type IntelPorts = { prices: TokenPrices; intel: IntelStore; memo: Memo }

import type { TokenPrices } from '../tokens/ports.ts'

/**
 * What the platform figures (stats, the creator fee leaderboard, fee totals) need: the indexer's
 * tables summed up (src/adapters/db/marketStats.store.ts), quote asset prices, and a short-lived cache of
 * whole-table answers. Amounts are base units of the quote asset or of the launched token;
 * `price` is a token's latest indexed price (PRICE_SCALE), null when it has none or needs none.
 */
export type FeeSumRow = { quoteSymbol: string; quote: bigint; token: bigint; price: bigint | null }
export type RankingRow = FeeSumRow & { agentId: string; name: string }
export type PlatformCounts = {
  agents: number
  runningAgents: number
  tokensLaunched: number
  tokensIndexed: number
  /** Quote base units traded in the last 24 h, per quote asset. */
  volume24h: Array<{ quoteSymbol: string; volume: bigint; trades: number }>
  /** Creator fees earned per launched token. */
  feesEarned: FeeSumRow[]
}
/** Trade fees of a token group (venue, quote asset, asset the fee is paid in), all time and last 24 h. */
export type FeeTotalRow = {
  venue: string
  quoteSymbol: string
  feeAsset: 'quote' | 'token'
  price: bigint | null
  trades: number
  creator: bigint
  platform: bigint
  trades24h: number
  creator24h: bigint
  platform24h: bigint
}

export interface MarketStats {
  /** Every live agent with a launched token: one row per token with its earned creator fees. */
  ranking(chainId: number | undefined): Promise<RankingRow[]>
  platformCounts(chainId: number | undefined): Promise<PlatformCounts>
  feeTotals(chainId: number | undefined): Promise<FeeTotalRow[]>
  /** The block the indexer has reached on this chain (null before its first pass or without a chain). */
  indexedBlock(chainId: number | undefined): Promise<number | null>
}

/** Answers shared by every caller for a moment (public routes, whole-table reads). */
export interface Memo {
  cached<T>(key: string, fn: () => Promise<T>): Promise<T>
}

export type MarketPorts = { prices: TokenPrices; stats: MarketStats; memo: Memo }

import type { Address } from 'viem'

/**
 * What the token and market use cases need from outside: the deployment's tokens (plain data
 * from the manifest), prices read on chain at one block, and the indexer's tables. Adapters
 * (src/adapters/chain/tokenAdapters.ts, src/adapters/db/tokenBoard.store.ts, src/adapters/db/marketStats.store.ts)
 * implement these and src/app/core.ts hands them in; a unit test can pass plain objects.
 */

export type PricePoint = {
  /** USD per whole unit, usd18. */
  usd18: bigint
  /** Where the price comes from: a pool, the venue-a curve contract, or null for the dollar itself. */
  source: Address | null
  sourceType: 'pool' | 'curve' | 'peg'
}

export type LaunchedTokenRef = {
  address: string
  venue: string
  quoteSymbol: string
  poolAddress: string | null
}

/** A launched token's market as the chain has it at the reader's block. */
export type TokenMarket = {
  /** `curve` before graduation (venue-a), `pool` on an AMM pool. */
  phase: 'curve' | 'pool'
  /** The venue-a contract or the pool. */
  source: Address
  sourceType: 'pool' | 'curve'
  /** Real reserves (what can be paid out). */
  tokenReserve: bigint
  quoteReserve: bigint
  /** Reserves the price math uses (real + virtual). */
  effectiveTokenReserve: bigint
  effectiveQuoteReserve: bigint
  /** Curve only: real quote reserve at which the token graduates. */
  graduationThreshold: bigint | null
  /** Quote base units per whole token, times PRICE_SCALE. */
  price: bigint
}

export type TokenMarketPoint = {
  /** USD per whole token, usd18; null when its quote asset has no USD price. */
  usd18: bigint | null
  source: Address
  sourceType: 'pool' | 'curve'
  /** Quote base units per whole token, times PRICE_SCALE. */
  price: bigint
  phase: 'curve' | 'pool'
}

/** Prices read at one block: every figure of one answer agrees. */
export interface PricesAtBlock {
  readonly block: bigint
  /** A quote asset by symbol (ETH from its USDC pool, USDC pegged); null for an unknown symbol. */
  quote(symbol: string): Promise<PricePoint | null>
  stock(s: { address: Address; pair: Address; decimals: number }): Promise<PricePoint>
  launched(t: LaunchedTokenRef): Promise<TokenMarketPoint>
  market(t: LaunchedTokenRef): Promise<TokenMarket>
}

/** USD prices (usd18) and decimals of every quote asset, read at one block (empty without a chain). */
export type QuotePrices = { block: bigint | null; usd18: Map<string, bigint>; decimals: Map<string, number> }

export type StockToken = { symbol: string; name: string; address: Address; pair: Address; decimals: number; logoUrl: string; seedPriceUsdc: string }

/** The deployment's own tokens, from its manifest. */
export type Deployment = {
  chainId: number
  /** Lower case. */
  weth: string
  usdc: string
  /** The WETH/USDC pool, lower case. */
  wethUsdcPair: string
  quoteAssets: Record<string, { address: string; decimals: number; native: boolean }>
  /** Symbols of the quote assets each venue accepts. */
  venueQuotes: Record<string, readonly string[]>
  stocks: readonly StockToken[]
}

export interface TokenPrices {
  /** Undefined when the service runs without a chain. */
  readonly deployment: Deployment | undefined
  /** Pins the latest block (503 `chain_unavailable` when the node cannot be read). */
  atLatestBlock(): Promise<PricesAtBlock>
  /** Quote asset prices now; a chain read failure is thrown. */
  quotePrices(): Promise<QuotePrices>
  /** Quote asset USD prices by symbol, reused for a moment; only pegged assets when the chain cannot be read. */
  quoteUsdOrPeg(): Promise<Map<string, bigint>>
  /** A launched token's market on chain now; undefined without a chain, on another chain, or when the node cannot be read. */
  liveMarket(t: LaunchedTokenRef & { chainId: number }): Promise<TokenMarket | undefined>
}

/** A row of the indexer's `token` table, with its creator agent's name. */
export type TokenRow = {
  address: string
  chain_id: number
  symbol: string
  name: string
  venue: string
  quote_symbol: string
  creator_address: string
  creator_agent_id: string | null
  agent_name: string | null
  launch_id: string | null
  pool_address: string | null
  graduated: boolean
  graduated_block: string | null
  verified: boolean
  total_supply: string
  description: string | null
  logo_url: string | null
  block_number: string
  tx_hash: string
  indexed_block: string | null
  curve_virtual_quote: string | null
  graduation_threshold: string | null
  pool_virtual_token: string | null
  pool_virtual_quote: string | null
  created_at: string | Date
}

/** Board figures: latest indexed price (PRICE_SCALE), quote base units traded in 24 h, the price 24 h ago. */
export type BoardRow = TokenRow & { price: string | null; volume_24h: string; price_24h_ago: string | null }

export type TradeRow = {
  tx_hash: string
  log_index: number
  block_number: string
  at: string | Date
  trader: string
  agent_id: string | null
  ours: boolean
  side: string
  source: string
  quote_amount: string
  token_amount: string
  creator_fee: string
  platform_fee: string
  fee_asset: string
  price_after: string | null
}

/** What the index knows of one token beyond its row. */
export type IndexedTokenState = {
  snapshot: { source: 'curve' | 'pool'; token_reserve: string; quote_reserve: string; price: string; block_number: string } | undefined
  /** Creator fee sums by kind (`earned`, `claimed`), base units. */
  fees: Array<{ kind: string; quote: string; token: string }>
  volume: { volume: string; trades: string; price_24h_ago: string | null }
}

/** A launched token found by address, with its indexed figures (see BoardRow). */
export type LaunchedTokenFigures = LaunchedTokenRef & {
  symbol: string
  name: string
  totalSupply: bigint
  volume24h: bigint
  price24hAgo: bigint | null
}

export interface TokenBoard {
  /** Newest first (block, then address, descending), `limit` rows after the cursor. */
  list(q: { chainId: number | undefined; limit: number; venue?: string | undefined; before?: [number, string] | undefined }): Promise<BoardRow[]>
  find(address: string): Promise<TokenRow | undefined>
  indexedState(t: TokenRow): Promise<IndexedTokenState>
  /** Newest first (block, then log index, descending). */
  trades(q: { token: string; limit: number; ours?: boolean | undefined; before?: [number, number] | undefined }): Promise<TradeRow[]>
  /** Launched tokens of this chain by address (lower case). */
  launched(chainId: number, addresses: string[]): Promise<LaunchedTokenFigures[]>
}

export type TokenPorts = { prices: TokenPrices; board: TokenBoard }

import type { Address, Hex } from 'viem'

/** A decoded event log as the indexer reads it (`args` is cast per event by its decoder). */
export type EventLog = {
  address: Address
  blockNumber: bigint
  blockHash: Hex
  logIndex: number
  transactionHash: Hex
  eventName: string
  args: unknown
}

export type Header = { number: number; hash: Hex; parentHash: Hex; timestamp: bigint }

/** `amm`: a reference pool of the deployment (indexer/referencePools.ts). */
export type Venue = 'venue-a' | 'venue-b' | 'self-funded' | 'amm'

/** What the indexer knows of a token while it decodes a range. */
export type TokenInfo = {
  address: string
  venue: Venue
  quoteAddress: string
  /** Pool whose Swap/Sync events belong to this token. */
  pool: string | null
  tokenIsToken0: boolean | null
  virtualToken: bigint
  virtualQuote: bigint
}

/** A token created in the range being indexed: its `token` row. */
export type NewToken = {
  address: string
  venue: Venue
  symbol: string
  name: string
  quoteAddress: string
  quoteSymbol: string
  creator: string
  totalSupply: bigint
  poolAddress: string | null
  verified: boolean
  blockNumber: number
  txHash: string
  curveVirtualQuote: bigint | null
  graduationThreshold: bigint | null
  poolTokenIsToken0: boolean | null
  poolVirtualToken: bigint | null
  poolVirtualQuote: bigint | null
}

/** A launch event decoded: the row to write and what decoding the rest of the range needs. */
export type FoundToken = { row: NewToken; info: TokenInfo }

export type Graduation = { token: string; pair: string; blockNumber: number }

export type TradeRow = {
  txHash: string
  logIndex: number
  token: string
  venue: string
  source: 'curve' | 'pool'
  trader: string
  side: 'buy' | 'sell'
  quoteAmount: bigint
  tokenAmount: bigint
  creatorFee: bigint
  platformFee: bigint
  feeAsset: 'quote' | 'token'
  priceAfter: bigint | null
  blockNumber: number
  /** USD per whole quote unit (usd18) at the trade's block, set after decoding (indexer/quoteUsd.ts). */
  quoteUsd18?: bigint | null
}

export type SnapshotRow = { token: string; blockNumber: number; logIndex: number; source: 'curve' | 'pool'; tokenReserve: bigint; quoteReserve: bigint; price: bigint }
export type FeeRow = { txHash: string; logIndex: number; token: string; kind: 'earned' | 'claimed'; quote: bigint; tokenAmount: bigint; blockNumber: number }

export type CurveReserves = { tokenReserve: bigint; quoteReserve: bigint }

/**
 * What the per-venue decoders share while they walk a range's logs in chain order: the tokens
 * known so far, and the rows they produce. A pool swap's fees and price arrive in later logs of
 * the same transaction (FeesAccrued, Sync), so the last swap per token is kept to complete it.
 */
export type DecodeState = {
  tokens: Map<string, TokenInfo>
  newTokens: Map<string, NewToken>
  byPool: Map<string, TokenInfo>
  curveState: Map<string, CurveReserves>
  senders: Map<string, string>
  lastSwap: Map<string, TradeRow>
  trades: TradeRow[]
  snapshots: SnapshotRow[]
  fees: FeeRow[]
}

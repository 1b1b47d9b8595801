import type { AgentsRepository } from '../agents/ports.ts'
import type { MarketStats } from '../market/ports.ts'
import type { PricesAtBlock, TokenPrices } from '../tokens/ports.ts'
import type { ClaimParams } from './fees.schema.ts'

/**
 * What the creator fee use cases need from outside: the agent, the tokens it launched (the
 * indexer's table), fee positions and prices read on chain at one block, and `claim` wallet
 * operations on the actor runtime. Adapters (src/adapters/chain/feeAdapters.ts, src/adapters/db/marketStats.store.ts)
 * implement these and src/app/core.ts hands them in; a unit test can pass plain objects.
 */

/** A token an agent launched, as the index has it. */
export type CreatorToken = {
  address: string
  symbol: string
  name: string
  venue: string
  quoteSymbol: string
  poolAddress: string | null
  /** The on-chain creator: only this wallet can claim. */
  creatorAddress: string
}

/**
 * A creator's fee position on one token, read from the venue's contract: venue-a's launchpad
 * (quote asset only) or venue-b's FeeLocker (quote asset from buys, the launched token itself
 * from sells). Base units.
 */
export type CreatorFeePosition = { earned: bigint; claimed: bigint; earnedToken: bigint; claimedToken: bigint }

export interface CreatorTokens {
  /** The agent's launched tokens on this chain (one when `tokenAddress` names it), in launch order. */
  ofAgent(q: { chainId: number; agentId: string; tokenAddress?: string | undefined }): Promise<CreatorToken[]>
}

export interface FeeChain {
  readonly chainId: number
  /** Decimals of a quote asset of the deployment (undefined for an unknown symbol). */
  quoteDecimals(symbol: string): number | undefined
  /** Pins the latest block (503 `chain_unavailable` when the node cannot be read). */
  atLatestBlock(): Promise<PricesAtBlock>
  /** Creator fee positions of tokens with a fee stream, read at `block` (503 `chain_unavailable` on a failed read). */
  positions(tokens: CreatorToken[], block: bigint): Promise<CreatorFeePosition[]>
}

/** A `claim` wallet operation as the API shows it (the planner's result spread in once confirmed). */
export type ClaimOpView = {
  id: string
  agentId: string
  status: string
  txHash: string | null
  error: { code: string; message: string } | null
  claims?: unknown
  policy?: { decision: string; rule: { name: string; scope: string } | null } | undefined
  gasUsed?: string
  blockNumber?: string
}

/** A wallet operation found by id: its owner, whether it is a wallet operation at all, and what it was started with. */
export type FoundOperation = { accountId: string; isWalletOp: boolean; agentId: string; params: unknown }

export interface ClaimOperations {
  /**
   * 409 `claim_in_progress` while another claim of the agent than `exceptId` (the one being
   * started: a retry's own reservation) is not finished; an early answer, start checks again
   * under the agent's lock.
   */
  assertNoneInFlight(agentId: string, exceptId?: string): Promise<void>
  find(opId: string): Promise<FoundOperation | undefined>
  /**
   * Starts the `claim` operation (or finds it, when `opId` exists), one per agent in flight,
   * counting 0 toward the daily cap (it pays the agent's own payout wallet), and waits for its
   * end through the runtime's commits.
   */
  start(p: { opId: string; accountId: string; agentId: string; params: ClaimParams | Record<string, never>; parentId?: string | undefined }): Promise<ClaimOpView>
}

export type FeePorts = {
  agents: Pick<AgentsRepository, 'getOwned'>
  tokens: CreatorTokens
  /** Absent without a chain: earnings and claims refuse with 503 `chain_unavailable`. */
  chain: FeeChain | undefined
  operations: ClaimOperations
  prices: TokenPrices
  stats: MarketStats
}

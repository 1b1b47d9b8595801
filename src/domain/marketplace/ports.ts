import type { AgentsRepository } from '../agents/ports.ts'
import type { ListingCursor } from './marketplace.schema.ts'

/** A listing as stored, with what its public card shows of the agent (never a key, prompt, policy or whitelist). */
export type ListingRow = {
  id: string
  agentId: string
  sellerAccountId: string
  sellerName: string
  buyerAccountId: string | null
  priceCredits: number
  /** What the buyer paid (the price, or the accepted bid); null until sold. */
  saleCredits: number | null
  feeCredits: number | null
  description: string | null
  status: 'active' | 'sold' | 'cancelled'
  createdAt: string
  endedAt: string | null
  /** The created time at full precision, for cursors. */
  cursorAt: string
  /** The agent's public card: as it is now while active, as it was when the listing ended once sold or cancelled. */
  agent: { name: string; strategy: string | null; skills: string[]; model: string; walletAddress: string; createdAt: string; launches: number }
  /** The card's figures as read just before the listing ended; null while active (read live then). */
  figures: ListingFigureValues | null
}

export type BidRow = {
  id: string
  listingId: string
  bidderAccountId: string
  credits: number
  status: 'active' | 'accepted' | 'rejected' | 'withdrawn' | 'expired'
  createdAt: string
  endedAt: string | null
  cursorAt: string
}

/** What a sale settles: who buys, at what price and fee, and the agent's skills the buyer keeps. */
export type Settlement = {
  listingId: string
  buyerAccountId: string
  /** The price (the listing's, or the accepted bid's) to the fee on it. */
  feeOf(priceCredits: number): number
  /** The agent's skills without the seller's custom ones. */
  keepSkills(skills: string[]): string[]
  /** Settles this bid (its reserved credits pay) instead of a buy at the listing's price. */
  bidId?: string | undefined
  /** The card's figures read just before the sale (kept on the sold listing). */
  figures?: ListingFigureValues | undefined
}

/**
 * The market's storage (src/adapters/db/listings.repository.ts). A sale is one Postgres transaction over
 * both accounts' ledgers (locked in id order), the agent, its actor and the listing.
 */
export interface ListingsRepository {
  /**
   * Inserts an active listing under the agent's advisory lock (the one every wallet operation takes),
   * refusing when the agent is gone, deleted, another account's (404/409), already listed (409) or
   * has a wallet operation or launch in flight (409).
   */
  create(input: { id: string; agentId: string; sellerAccountId: string; priceCredits: number; description: string | null }): Promise<ListingRow>
  get(id: string): Promise<ListingRow | undefined>
  listActive(q: { sort: 'newest' | 'price'; maxPriceCredits?: number | undefined; limit: number; after?: ListingCursor | undefined }): Promise<ListingRow[]>
  /** The listings the account sold, bought or listed, newest first. */
  history(accountId: string, page: { limit: number; after?: ListingCursor | undefined }): Promise<ListingRow[]>
  /**
   * Cancels the seller's active listing (its bids expire, their credits released), keeping the
   * card as it is now with `figures`; undefined when not the seller's or not active.
   */
  cancel(input: { id: string; sellerAccountId: string; figures?: ListingFigureValues | undefined }): Promise<ListingRow | undefined>
  /**
   * The sale, in one transaction: buyer debited, seller credited less the fee (ledger entries with
   * unique refs), the agent (and its actor) moved to the buyer and `stopped`, its whitelist, payout
   * wallet, pending guardrail changes, scheduled runs, the seller's custom-skill grants and chat
   * history cleared, the listing `sold` with the card as sold kept, the other bids expired (the buyer's own released before
   * its balance is checked, so they never count against it). `created: false` when this buyer
   * bought it already (a retry).
   */
  settle(s: Settlement): Promise<{ listing: ListingRow; created: boolean }>
  placeBid(input: { id: string; listingId: string; bidderAccountId: string; credits: number }): Promise<BidRow>
  getBid(id: string): Promise<BidRow | undefined>
  /** Ends an active bid (`rejected` by the seller, `withdrawn` by the bidder) and releases its credits; undefined when not active. */
  endBid(input: { id: string; status: 'rejected' | 'withdrawn' }): Promise<BidRow | undefined>
  bidsBy(accountId: string, page: { limit: number; after?: ListingCursor | undefined }): Promise<BidRow[]>
  /** Bids on the account's listings, newest first. */
  bidsReceived(accountId: string, page: { limit: number; after?: ListingCursor | undefined }): Promise<BidRow[]>
}

/** The agent's actor while listed: `paused` with reason `listed`, then back to `stopped` on a cancel. */
export interface ListingActors {
  /** Pauses the agent with reason `listed` (its runs stop, nothing fires on its own). */
  list(agentId: string): Promise<void>
  /** Back to `stopped` after a cancel (a no-op when it is not paused for a listing). */
  unlist(agentId: string): Promise<void>
  /** Drops what this process holds in memory of the agent's actor (the sale rewrote it in SQL). */
  forget(agentId: string): void
}

/** The card's figures in USD, as GET /wallet/portfolio and GET /fees/earnings give them (null when they cannot be read). */
export type ListingFigureValues = {
  portfolioValueUsd: string | null
  creatorFeesEarnedUsd: string | null
  costBasisUsd: string | null
  unrealisedPnlUsd: string | null
  realisedPnlUsd: string | null
}

/** What the public card adds from the chain and the agent's ledger: portfolio value, creator fees, cost basis and PnL, in USD now. */
export interface ListingFigures {
  /** An active listing's figures now, as its seller reads them. */
  valueOf(listing: { sellerAccountId: string; agentId: string }): Promise<ListingFigureValues>
}

export type MarketplaceDeps = {
  listings: ListingsRepository
  agents: Pick<AgentsRepository, 'getOwned'>
  actors: ListingActors
  figures: ListingFigures
  newId(): string
}

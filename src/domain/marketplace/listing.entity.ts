import { defineEntity, p, type InferEntity } from '@mikro-orm/core'

/**
 * A listing of an agent on the market (a plain entity, not an actor): `active`, then `sold` or
 * `cancelled`. The sale's writes are SQL in src/adapters/db/listings.repository.ts (one transaction over
 * two accounts' ledgers, the agent and its actor); reads of one listing go through MikroORM.
 */
export const ListingSchema = defineEntity({
  name: 'Listing',
  tableName: 'listing',
  properties: {
    id: p.uuid().primary(),
    agentId: p.uuid(),
    sellerAccountId: p.uuid(),
    buyerAccountId: p.uuid().nullable(),
    priceCredits: p.bigint('number'),
    saleCredits: p.bigint('number').nullable(),
    feeCredits: p.bigint('number').nullable(),
    description: p.text().nullable(),
    status: p.text(),
    createdAt: p.datetime().onCreate(() => new Date()),
    endedAt: p.datetime().nullable(),
    /** The public card as it was when the listing ended (src/adapters/db/listings.repository.ts `keepCard`). */
    endedCard: p.json<Record<string, unknown>>().nullable(),
  },
})
export type ListingRecord = InferEntity<typeof ListingSchema>

/** A bid on an active listing: its credits are reserved on the bidder's account while it is `active`. */
export const ListingBidSchema = defineEntity({
  name: 'ListingBid',
  tableName: 'listing_bid',
  properties: {
    id: p.uuid().primary(),
    listingId: p.uuid(),
    bidderAccountId: p.uuid(),
    credits: p.bigint('number'),
    status: p.text(),
    createdAt: p.datetime().onCreate(() => new Date()),
    endedAt: p.datetime().nullable(),
  },
})
export type ListingBidRecord = InferEntity<typeof ListingBidSchema>

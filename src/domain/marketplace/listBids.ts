import { bidView } from './listingView.ts'
import { decodeListingCursor, encodeListingCursor } from './marketplace.schema.ts'
import type { BidRow, MarketplaceDeps } from './ports.ts'

type Page = { accountId: string; limit: number; cursor?: string | undefined }

async function page(read: (accountId: string, p: { limit: number; after?: { key: string | number; id: string } | undefined }) => Promise<BidRow[]>, q: Page) {
  const rows = await read(q.accountId, { limit: q.limit + 1, after: decodeListingCursor(q.cursor) })
  const last = rows[q.limit - 1]
  return { bids: rows.slice(0, q.limit).map(bidView), nextCursor: rows.length > q.limit && last ? encodeListingCursor({ key: last.cursorAt, id: last.id }) : null }
}

/**
 * The bids the account placed, newest first, in any status.
 *
 * @example
 * const { bids } = await listMyBids(deps, { accountId, limit: 20 })
 */
export const listMyBids = (deps: Pick<MarketplaceDeps, 'listings'>, q: Page) => page(deps.listings.bidsBy, q)

/**
 * The bids on the account's listings, newest first, in any status.
 *
 * @example
 * const { bids } = await listReceivedBids(deps, { accountId, limit: 20 })
 */
export const listReceivedBids = (deps: Pick<MarketplaceDeps, 'listings'>, q: Page) => page(deps.listings.bidsReceived, q)

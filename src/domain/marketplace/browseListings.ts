import { NotFoundError } from '../errors.ts'
import { listingView, ownListingView } from './listingView.ts'
import { decodeListingCursor, encodeListingCursor, type BrowseListingsQuery } from './marketplace.schema.ts'
import type { ListingRow, MarketplaceDeps } from './ports.ts'

type Deps = Pick<MarketplaceDeps, 'listings' | 'figures'>

const nextCursor = (rows: ListingRow[], limit: number, key: (r: ListingRow) => string | number) => {
  const last = rows[limit - 1]
  return rows.length > limit && last ? encodeListingCursor({ key: key(last), id: last.id }) : null
}

/**
 * Active listings for anyone (no credentials), newest first or cheapest first, with each agent's
 * public card.
 *
 * @example
 * const { listings, nextCursor } = await browseListings(deps, { limit: 20, sort: 'price' })
 */
export async function browseListings(deps: Deps, q: BrowseListingsQuery) {
  const rows = await deps.listings.listActive({ sort: q.sort, maxPriceCredits: q.maxPriceCredits, limit: q.limit + 1, after: decodeListingCursor(q.cursor, q.sort === 'price' ? 'price' : 'time') })
  const page = rows.slice(0, q.limit)
  return {
    listings: await Promise.all(page.map((l) => listingView(deps.figures, l))),
    nextCursor: nextCursor(rows, q.limit, (r) => (q.sort === 'price' ? r.priceCredits : r.cursorAt)),
  }
}

/**
 * One listing for anyone, in any status (a sold or cancelled one stays readable by its id).
 *
 * @example
 * const listing = await getListing(deps, { listingId })
 */
export async function getListing(deps: Deps, { listingId }: { listingId: string }) {
  const row = await deps.listings.get(listingId)
  if (!row) throw new NotFoundError('Listing')
  return listingView(deps.figures, row)
}

/**
 * The account's market history: listings it made (any status) and agents it bought, newest first.
 *
 * @example
 * const { listings } = await getMarketHistory(deps, { accountId, limit: 20 })
 */
export async function getMarketHistory(deps: Deps, { accountId, limit, cursor }: { accountId: string; limit: number; cursor?: string | undefined }) {
  const rows = await deps.listings.history(accountId, { limit: limit + 1, after: decodeListingCursor(cursor) })
  return {
    listings: await Promise.all(rows.slice(0, limit).map((l) => ownListingView(deps.figures, l, accountId))),
    nextCursor: nextCursor(rows, limit, (r) => r.cursorAt),
  }
}

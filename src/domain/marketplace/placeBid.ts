import { NotFoundError } from '../errors.ts'
import { ListingUnavailableError, OwnListingError } from './errors.ts'
import { bidView } from './listingView.ts'
import type { MarketplaceDeps } from './ports.ts'

/**
 * Places a bid on an active listing: the bidder's credits are reserved (402 when they do not
 * cover it) until the bid is accepted, rejected, withdrawn or the listing ends. 404 unknown,
 * 422 one's own, 409 `listing_unavailable` when it is not active.
 *
 * @example
 * const bid = await placeBid(deps, { accountId, listingId, credits: 900 })
 */
export async function placeBid(deps: Pick<MarketplaceDeps, 'listings' | 'newId'>, input: { accountId: string; listingId: string; credits: number }) {
  const listing = await deps.listings.get(input.listingId)
  if (!listing) throw new NotFoundError('Listing')
  if (listing.sellerAccountId === input.accountId) throw new OwnListingError()
  if (listing.status !== 'active') throw new ListingUnavailableError({ status: listing.status })
  return bidView(await deps.listings.placeBid({ id: deps.newId(), listingId: input.listingId, bidderAccountId: input.accountId, credits: input.credits }))
}

import { NotFoundError } from '../errors.ts'
import { builtinSkillsOnly } from './buyListing.ts'
import { BidUnavailableError } from './errors.ts'
import { listingView, type ListingView } from './listingView.ts'
import { marketFee } from './marketFee.ts'
import type { MarketplaceDeps } from './ports.ts'

/**
 * The seller accepts a bid: settled exactly as a buy by the bidder at the bid's price (one
 * transaction; the bid's reserved credits pay). 404 unless the caller is the listing's seller;
 * 409 when the bid or the listing is no longer active.
 *
 * @example
 * const listing = await acceptBid(deps, { accountId: seller, bidId })
 */
export async function acceptBid(deps: Pick<MarketplaceDeps, 'listings' | 'actors' | 'figures'>, { accountId, bidId }: { accountId: string; bidId: string }): Promise<ListingView> {
  const bid = await deps.listings.getBid(bidId)
  const listing = bid && (await deps.listings.get(bid.listingId))
  if (!bid || !listing || listing.sellerAccountId !== accountId) throw new NotFoundError('Bid')
  if (bid.status !== 'active' && bid.status !== 'accepted') throw new BidUnavailableError({ status: bid.status })
  const figures = listing.status === 'active' ? await deps.figures.valueOf(listing) : undefined
  const sold = await deps.listings.settle({ listingId: listing.id, buyerAccountId: bid.bidderAccountId, feeOf: marketFee, keepSkills: builtinSkillsOnly, bidId, figures })
  deps.actors.forget(sold.listing.agentId)
  return listingView(deps.figures, sold.listing)
}

import { NotFoundError } from '../errors.ts'
import { ListingUnavailableError } from './errors.ts'
import { listingView, type ListingView } from './listingView.ts'
import type { MarketplaceDeps } from './ports.ts'

export type CancelListingDeps = Pick<MarketplaceDeps, 'listings' | 'actors' | 'figures'>

/**
 * The seller cancels an active listing: it becomes `cancelled`, its bids expire (their credits
 * released) and the agent goes back to `stopped`. 404 for anyone but the seller; 409
 * `listing_unavailable` once it is sold or cancelled.
 *
 * @example
 * const listing = await cancelListing(deps, { accountId, listingId })
 */
export async function cancelListing(deps: CancelListingDeps, { accountId, listingId }: { accountId: string; listingId: string }): Promise<ListingView> {
  const current = await deps.listings.get(listingId)
  if (!current || current.sellerAccountId !== accountId) throw new NotFoundError('Listing')
  const figures = current.status === 'active' ? await deps.figures.valueOf(current) : undefined
  const cancelled = await deps.listings.cancel({ id: listingId, sellerAccountId: accountId, figures })
  if (!cancelled) throw new ListingUnavailableError({ status: (await deps.listings.get(listingId))?.status ?? current.status })
  await deps.actors.unlist(cancelled.agentId)
  return listingView(deps.figures, cancelled)
}

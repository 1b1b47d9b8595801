import { NotFoundError } from '../errors.ts'
import { BidUnavailableError } from './errors.ts'
import { bidView } from './listingView.ts'
import type { MarketplaceDeps } from './ports.ts'

/**
 * Ends an active bid and releases its credits: `withdrawn` by its bidder, `rejected` by the
 * listing's seller. 404 for anyone else; 409 when it is no longer active.
 *
 * @example
 * const bid = await endBid(deps, { accountId, bidId, as: 'withdrawn' })
 */
export async function endBid(deps: Pick<MarketplaceDeps, 'listings'>, { accountId, bidId, as }: { accountId: string; bidId: string; as: 'rejected' | 'withdrawn' }) {
  const bid = await deps.listings.getBid(bidId)
  if (!bid) throw new NotFoundError('Bid')
  const allowed = as === 'withdrawn' ? bid.bidderAccountId === accountId : (await deps.listings.get(bid.listingId))?.sellerAccountId === accountId
  if (!allowed) throw new NotFoundError('Bid')
  const ended = await deps.listings.endBid({ id: bidId, status: as })
  if (!ended) throw new BidUnavailableError({ status: (await deps.listings.getBid(bidId))?.status ?? bid.status })
  return bidView(ended)
}

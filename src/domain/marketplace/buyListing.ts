import { NotFoundError } from '../errors.ts'
import { SKILL_SLUGS } from '../skills/builtinSkills.ts'
import { ListingUnavailableError, OwnListingError } from './errors.ts'
import { listingView, type ListingView } from './listingView.ts'
import { marketFee } from './marketFee.ts'
import type { MarketplaceDeps } from './ports.ts'

export type BuyListingDeps = Pick<MarketplaceDeps, 'listings' | 'actors' | 'figures'>

/** The seller's custom skills do not go with the agent: only built-in skill slugs stay. */
export const builtinSkillsOnly = (skills: string[]) => skills.filter((s) => SKILL_SLUGS.has(s))

/**
 * Buys a listing at its price (or settles an accepted bid), in one transaction (see
 * `ListingsRepository.settle`). 404 unknown, 422 one's own, 409 `listing_unavailable` when
 * sold or cancelled (the second of two buyers), 402 `insufficient_credits` with nothing changed.
 * A retry by the buyer who bought it answers the sold listing again.
 *
 * @example
 * const listing = await buyListing(deps, { accountId: buyer, listingId })
 */
export async function buyListing(deps: BuyListingDeps, input: { accountId: string; listingId: string; bidId?: string | undefined }): Promise<ListingView> {
  const current = await deps.listings.get(input.listingId)
  if (!current) throw new NotFoundError('Listing')
  if (current.sellerAccountId === input.accountId) throw new OwnListingError()
  if (current.status !== 'active' && !(current.status === 'sold' && current.buyerAccountId === input.accountId)) {
    throw new ListingUnavailableError({ status: current.status })
  }
  // Read while listed (nothing moves its funds then): the card's figures as sold, kept on the listing.
  const figures = current.status === 'active' ? await deps.figures.valueOf(current) : undefined
  const { listing } = await deps.listings.settle({
    listingId: input.listingId,
    buyerAccountId: input.accountId,
    feeOf: marketFee,
    keepSkills: builtinSkillsOnly,
    bidId: input.bidId,
    figures,
  })
  // This node's memory of the agent (actor, row) belongs to the seller: drop it now.
  deps.actors.forget(listing.agentId)
  return listingView(deps.figures, listing)
}

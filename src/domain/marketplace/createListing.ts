import { InvalidStateError } from '../errors.ts'
import { PaperUnsupportedError } from '../paper/errors.ts'
import { assertNotListed } from '../agents/listedAgent.ts'
import { listingView, type ListingView } from './listingView.ts'
import type { CreateListingBody } from './marketplace.schema.ts'
import type { MarketplaceDeps } from './ports.ts'

export type CreateListingDeps = Pick<MarketplaceDeps, 'listings' | 'agents' | 'actors' | 'figures'>
export type CreateListingInput = CreateListingBody & { accountId: string }

/**
 * Lists one of the account's agents for sale: 404 for another account's agent, 409 when it is
 * deleted, already listed or has a money move in flight. The listing is written first (under the
 * agent's lock, so no wallet operation can start after it), then the agent is paused with reason
 * `listed`; if the pause is refused (deleted meanwhile) the listing is cancelled again.
 *
 * @example
 * const listing = await createListing(deps, { accountId, agentId, priceCredits: 5000 })
 */
export async function createListing(deps: CreateListingDeps, input: CreateListingInput): Promise<ListingView> {
  const agent = await deps.agents.getOwned(input.accountId, input.agentId)
  if (agent.status === 'deleted') throw new InvalidStateError({ event: 'list the agent', state: 'deleted' })
  assertNotListed(agent, 'list the agent again')
  // Its holdings are virtual: a buyer would pay for funds that do not exist (docs/api.md, "Paper agents").
  if (agent.mode === 'paper') throw new PaperUnsupportedError('be listed on the market')
  const listing = await deps.listings.create({
    id: crypto.randomUUID(),
    agentId: agent.id,
    sellerAccountId: input.accountId,
    priceCredits: input.priceCredits,
    description: input.description ?? null,
  })
  try {
    await deps.actors.list(agent.id)
  } catch (err) {
    await deps.listings.cancel({ id: listing.id, sellerAccountId: input.accountId })
    throw err
  }
  return listingView(deps.figures, listing)
}

import { randomUUID } from 'node:crypto'
import type { CoreAdapters } from './coreAdapters.ts'
import type { AgentsRepository } from '../domain/agents/ports.ts'
import { createListingsRepository } from '../adapters/db/listings.repository.ts'
import { createListingActors } from '../actors/agent/listingActors.ts'
import { MARKET_SOLD } from '../actors/agent/agent.machine.ts'
import type { AgentRowCache } from '../domain/agents/agentRowCache.ts'
import type { MarketplaceDeps } from '../domain/marketplace/ports.ts'
import type { BrowseListingsQuery } from '../domain/marketplace/marketplace.schema.ts'
import { listingFigures, type FigureSources } from '../domain/marketplace/listingFigures.ts'
import { createListing, type CreateListingInput } from '../domain/marketplace/createListing.ts'
import { cancelListing } from '../domain/marketplace/cancelListing.ts'
import { browseListings, getListing, getMarketHistory } from '../domain/marketplace/browseListings.ts'
import { buyListing } from '../domain/marketplace/buyListing.ts'
import { placeBid } from '../domain/marketplace/placeBid.ts'
import { acceptBid } from '../domain/marketplace/acceptBid.ts'
import { endBid } from '../domain/marketplace/endBid.ts'
import { listMyBids, listReceivedBids } from '../domain/marketplace/listBids.ts'

/**
 * The market's use cases (src/domain/marketplace), wired for src/app/core.ts: listings of agents for
 * credits, sales and bids. `figures` reads a listed agent's portfolio and creator fees (absent
 * without a chain).
 *
 * @example
 * const market = marketplaceUseCases(adapters, { portfolio, feeEarnings }, agents, agentRows)
 * await market.buyListing({ accountId, listingId })
 */
export function marketplaceUseCases({ pool, runtime, identity, credits }: CoreAdapters, figures: FigureSources | undefined, agents: AgentsRepository, agentRows: AgentRowCache) {
  const deps: MarketplaceDeps = {
    listings: createListingsRepository({
      pool, em: identity.em, credits,
      async sold(db, { agentId, listingId, accountId }) {
        const entry = await runtime.applyWithin(db, agentId, { type: MARKET_SOLD, listingId, accountId }, { accountId })
        return () => runtime.afterExternalCommit(entry)
      },
    }),
    agents,
    actors: createListingActors(runtime, agentRows),
    figures: listingFigures(figures),
    newId: randomUUID,
  }
  return {
    createListing: (input: CreateListingInput) => createListing(deps, input),
    browseListings: (input: BrowseListingsQuery) => browseListings(deps, input),
    getListing: (input: { listingId: string }) => getListing(deps, input),
    getMarketHistory: (input: { accountId: string; limit: number; cursor?: string | undefined }) => getMarketHistory(deps, input),
    cancelListing: (input: { accountId: string; listingId: string }) => cancelListing(deps, input),
    buyListing: (input: { accountId: string; listingId: string }) => buyListing(deps, input),
    placeBid: (input: { accountId: string; listingId: string; credits: number }) => placeBid(deps, input),
    acceptBid: (input: { accountId: string; bidId: string }) => acceptBid(deps, input),
    endBid: (input: { accountId: string; bidId: string; as: 'rejected' | 'withdrawn' }) => endBid(deps, input),
    listMyBids: (input: { accountId: string; limit: number; cursor?: string | undefined }) => listMyBids(deps, input),
    listReceivedBids: (input: { accountId: string; limit: number; cursor?: string | undefined }) => listReceivedBids(deps, input),
    /** The id of the account's agent's active listing; null when it is not listed (or not the account's). */
    activeListingOf: async ({ accountId, agentId }: { accountId: string; agentId: string }) => (await agents.findOwned(accountId, agentId))?.listingId ?? null,
  }
}

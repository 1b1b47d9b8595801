import { z } from 'zod'
import { defineTool } from './tool.ts'

const page = {
  limit: z.number('An integer from 1 to 100.').int('An integer from 1 to 100.').min(1, 'An integer from 1 to 100.').max(100, 'An integer from 1 to 100.').default(20),
  cursor: z.string('The nextCursor of the previous page.').max(300).optional(),
}
const credits = z.number('A whole number of credits.').int('A whole number of credits.').min(1, 'At least 1 credit.').max(1_000_000_000_000, 'At most 10^12 credits.')
const listingId = z.uuid('A listing id (uuid).')
const bidId = z.uuid('A bid id (uuid).')

export const browseMarketplaceTool = defineTool({
  name: 'browse_marketplace',
  description:
    'Browse the agents for sale on the market: each active listing with its price in credits (1 credit = 0.001 USD), ' +
    'the seller name and the agent card (strategy, skills, model, portfolio value, creator fees, launches). ' +
    'sort: newest (default) or price (cheapest first); max_price_credits filters. Pass nextCursor back as cursor.',
  args: z.strictObject({ ...page, sort: z.enum(['newest', 'price']).default('newest'), max_price_credits: credits.optional() }),
  scope: 'read',
  movesFunds: false,
  agent: 'none',
  run: ({ core }, a) => core.browseListings({ limit: a.limit, cursor: a.cursor, sort: a.sort, maxPriceCredits: a.max_price_credits }),
})

export const createMarketplaceListingTool = defineTool({
  name: 'create_marketplace_listing',
  description:
    'Offer the agent for sale on the market for price_credits, with its wallet, holdings and track record. While ' +
    'listed the agent is paused and nothing can move its funds; delist_marketplace_listing cancels. On a sale the ' +
    'buyer gets the agent stopped, without its whitelist, payout wallet, schedule, custom skills or chat history; you ' +
    'are credited the price less the 5% platform fee.',
  args: z.strictObject({ price_credits: credits, description: z.string().trim().max(2000).optional() }),
  scope: 'trade',
  movesFunds: false,
  run: ({ core, accountId, agentId }, a) => core.createListing({ accountId, agentId, priceCredits: a.price_credits, description: a.description }),
})

export const delistMarketplaceListingTool = defineTool({
  name: 'delist_marketplace_listing',
  description: 'Cancel one of your active listings: its bids expire (their credits are released) and the agent is stopped again.',
  args: z.strictObject({ listing_id: listingId }),
  scope: 'trade',
  movesFunds: false,
  agent: 'none',
  run: ({ core, accountId }, a) => core.cancelListing({ accountId, listingId: a.listing_id }),
})

export const getMarketplaceHistoryTool = defineTool({
  name: 'get_marketplace_history',
  description: 'Your market history, newest first: the listings you made (active, sold, cancelled) and the agents you bought, with the price paid and the fee.',
  args: z.strictObject(page),
  scope: 'read',
  movesFunds: false,
  agent: 'none',
  run: ({ core, accountId }, a) => core.getMarketHistory({ accountId, limit: a.limit, cursor: a.cursor }),
})

export const placeBidTool = defineTool({
  name: 'place_bid',
  description:
    'Bid credits on an active listing: the credits are reserved on your account until the seller accepts (you then ' +
    'own the agent), rejects, you withdraw, or the listing ends.',
  args: z.strictObject({ listing_id: listingId, credits }),
  scope: 'trade',
  movesFunds: true,
  agent: 'none',
  run: ({ core, accountId }, a) => core.placeBid({ accountId, listingId: a.listing_id, credits: a.credits }),
  preview: async ({ core, accountId }, a) => ({ listing: await core.getListing({ listingId: a.listing_id }), reserve: a.credits, balance: await core.getBilling({ accountId }) }),
})

export const getMyBidsTool = defineTool({
  name: 'get_my_bids',
  description: 'The bids you placed, newest first, with their status (active, accepted, rejected, withdrawn, expired).',
  args: z.strictObject(page),
  scope: 'read',
  movesFunds: false,
  agent: 'none',
  run: ({ core, accountId }, a) => core.listMyBids({ accountId, limit: a.limit, cursor: a.cursor }),
})

export const getReceivedBidsTool = defineTool({
  name: 'get_received_bids',
  description: 'The bids on your listings, newest first, with their status; accept_marketplace_bid or reject_marketplace_bid an active one.',
  args: z.strictObject(page),
  scope: 'read',
  movesFunds: false,
  agent: 'none',
  run: ({ core, accountId }, a) => core.listReceivedBids({ accountId, limit: a.limit, cursor: a.cursor }),
})

export const acceptMarketplaceBidTool = defineTool({
  name: 'accept_marketplace_bid',
  description:
    'Accept a bid on your listing: settled at once as a sale at the bid price (you are credited it less the 5% ' +
    'platform fee, the bidder gets the agent), the other bids expire.',
  args: z.strictObject({ bid_id: bidId }),
  scope: 'trade',
  movesFunds: true,
  agent: 'none',
  run: ({ core, accountId }, a) => core.acceptBid({ accountId, bidId: a.bid_id }),
  preview: async ({ core, accountId }, a) => {
    const bid = (await core.listReceivedBids({ accountId, limit: 100 })).bids.find((b) => b.id === a.bid_id)
    return bid ? { bid, listing: await core.getListing({ listingId: bid.listingId }) } : { bid: null }
  },
})

export const rejectMarketplaceBidTool = defineTool({
  name: 'reject_marketplace_bid',
  description: 'Reject an active bid on your listing: the bidder gets the reserved credits back.',
  args: z.strictObject({ bid_id: bidId }),
  scope: 'trade',
  movesFunds: false,
  agent: 'none',
  run: ({ core, accountId }, a) => core.endBid({ accountId, bidId: a.bid_id, as: 'rejected' }),
})

export const withdrawMarketplaceBidTool = defineTool({
  name: 'withdraw_marketplace_bid',
  description: 'Withdraw one of your active bids: its reserved credits are released.',
  args: z.strictObject({ bid_id: bidId }),
  scope: 'trade',
  movesFunds: false,
  agent: 'none',
  run: ({ core, accountId }, a) => core.endBid({ accountId, bidId: a.bid_id, as: 'withdrawn' }),
})

/** The market's tools (the reference MCP catalogue's names): account-level, never granted to a model by a skill. */
export const MARKETPLACE_TOOLS = [
  browseMarketplaceTool, createMarketplaceListingTool, delistMarketplaceListingTool, getMarketplaceHistoryTool,
  placeBidTool, getMyBidsTool, getReceivedBidsTool, acceptMarketplaceBidTool, rejectMarketplaceBidTool, withdrawMarketplaceBidTool,
] as const
export const MARKETPLACE_TOOL_NAMES: ReadonlySet<string> = new Set(MARKETPLACE_TOOLS.map((t) => t.name))

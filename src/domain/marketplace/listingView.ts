import type { BidRow, ListingFigures, ListingRow } from './ports.ts'

/** What the card's PnL is: the portfolio's totals. */
export const PNL_NOTE =
  "Cost basis, unrealised and realised PnL by average cost from the agent's ledger (swaps, transfers in and out, launches, fee claims), as GET /wallet/portfolio totals them; realised PnL includes tokens no longer held and is net of gas."

/**
 * A listing as the API shows it to anyone: the seller's display name only, and the agent's public
 * card (never its wallet key, whitelist, policy, payout wallet, prompt or chat history): as it is
 * now while active, as it was when the listing ended once sold or cancelled.
 */
export async function listingView(figures: ListingFigures, l: ListingRow) {
  // An ended listing shows the figures kept when it ended, never the agent's current ones.
  const value = l.figures ?? (await figures.valueOf(l))
  return {
    id: l.id,
    agentId: l.agentId,
    status: l.status,
    priceCredits: l.priceCredits,
    description: l.description,
    seller: { name: l.sellerName },
    agent: {
      id: l.agentId,
      name: l.agent.name,
      strategy: l.agent.strategy,
      skills: l.agent.skills,
      model: l.agent.model,
      walletAddress: l.agent.walletAddress,
      portfolioValueUsd: value.portfolioValueUsd,
      creatorFeesEarnedUsd: value.creatorFeesEarnedUsd,
      launches: l.agent.launches,
      pnl: { costBasisUsd: value.costBasisUsd, unrealisedUsd: value.unrealisedPnlUsd, realisedUsd: value.realisedPnlUsd, note: PNL_NOTE },
      createdAt: l.agent.createdAt,
    },
    createdAt: l.createdAt,
    endedAt: l.endedAt,
  }
}
export type ListingView = Awaited<ReturnType<typeof listingView>>

/** A listing in its seller's or buyer's history: the public view plus the sale's figures. */
export async function ownListingView(figures: ListingFigures, l: ListingRow, accountId: string) {
  return {
    ...(await listingView(figures, l)),
    role: l.sellerAccountId === accountId ? ('seller' as const) : ('buyer' as const),
    saleCredits: l.saleCredits,
    feeCredits: l.feeCredits,
  }
}

export const bidView = (b: BidRow) => ({
  id: b.id,
  listingId: b.listingId,
  credits: b.credits,
  status: b.status,
  createdAt: b.createdAt,
  endedAt: b.endedAt,
})

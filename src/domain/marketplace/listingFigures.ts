import type { ListingFigures } from './ports.ts'

type AgentRef = { accountId: string; agentId: string }
export type FigureSources = {
  /** The agent's portfolio as its owner reads it (GET /wallet/portfolio): its value and PnL totals. */
  portfolio(ref: AgentRef): Promise<{ totalValueUsd: string; costBasisUsd: string; unrealisedPnlUsd: string; realisedPnlUsd: string }>
  /** The agent's creator fees as its owner reads them (GET /fees/earnings). */
  feeEarnings(ref: AgentRef): Promise<{ earnedUsd: string }>
}

/**
 * The card's figures read now, as the seller reads them (an active listing's: an ended one shows
 * the figures kept when it ended); each is null when it cannot be read (no chain, an RPC error): a listing is
 * still shown without them.
 *
 * @example
 * const figures = listingFigures({ portfolio: core.getPortfolio, feeEarnings: core.getFeeEarnings })
 */
export function listingFigures(sources: FigureSources | undefined): ListingFigures {
  return {
    async valueOf(l) {
      if (!sources) return { portfolioValueUsd: null, creatorFeesEarnedUsd: null, costBasisUsd: null, unrealisedPnlUsd: null, realisedPnlUsd: null }
      const ref = { accountId: l.sellerAccountId, agentId: l.agentId }
      const [portfolio, fees] = await Promise.all([sources.portfolio(ref).catch(() => null), sources.feeEarnings(ref).catch(() => null)])
      return {
        portfolioValueUsd: portfolio?.totalValueUsd ?? null,
        creatorFeesEarnedUsd: fees?.earnedUsd ?? null,
        costBasisUsd: portfolio?.costBasisUsd ?? null,
        unrealisedPnlUsd: portfolio?.unrealisedPnlUsd ?? null,
        realisedPnlUsd: portfolio?.realisedPnlUsd ?? null,
      }
    },
  }
}

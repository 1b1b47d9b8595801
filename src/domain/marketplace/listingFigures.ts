import { usdCents } from '../agents/policy.ts'
import { centsToUsd } from '../wallet/walletRules.ts'
import type { ListingFigures } from './ports.ts'

/** A signed dollar string ("-3.07") in cents. */
const signedCents = (usd: string) => (usd.startsWith('-') ? -usdCents(usd.slice(1)) : usdCents(usd))

type AgentRef = { accountId: string; agentId: string }
export type FigureSources = {
  /** The agent's portfolio as its owner reads it (GET /wallet/portfolio). */
  portfolio(ref: AgentRef): Promise<{ totalValueUsd: string; holdings: readonly { unrealizedPnlUsd: string | null }[] }>
  /** The agent's creator fees as its owner reads them (GET /fees/earnings). */
  feeEarnings(ref: AgentRef): Promise<{ earnedUsd: string }>
}

/**
 * The card's figures read now, as the agent's owner would read them (the seller while listed, the
 * buyer once sold); each is null when it cannot be read (no chain, an RPC error): a listing is
 * still shown without them.
 *
 * @example
 * const figures = listingFigures({ portfolio: core.getPortfolio, feeEarnings: core.getFeeEarnings })
 */
export function listingFigures(sources: FigureSources | undefined): ListingFigures {
  return {
    async valueOf(l) {
      if (!sources) return { portfolioValueUsd: null, creatorFeesEarnedUsd: null, unrealisedPnlUsd: null }
      const ref = { accountId: l.status === 'sold' && l.buyerAccountId ? l.buyerAccountId : l.sellerAccountId, agentId: l.agentId }
      const [portfolio, fees] = await Promise.all([sources.portfolio(ref).catch(() => null), sources.feeEarnings(ref).catch(() => null)])
      const pnl = portfolio?.holdings.filter((h) => h.unrealizedPnlUsd !== null) ?? []
      return {
        portfolioValueUsd: portfolio?.totalValueUsd ?? null,
        creatorFeesEarnedUsd: fees?.earnedUsd ?? null,
        unrealisedPnlUsd: pnl.length > 0 ? centsToUsd(pnl.reduce((s, h) => s + signedCents(h.unrealizedPnlUsd!), 0n)) : null,
      }
    },
  }
}

import { AgentListedError } from '../errors.ts'

/** The pause reason of an agent listed on the market: its actor is `paused` with it while the listing is active. */
export const LISTED = 'listed'

/**
 * The one check every fund-moving use case makes on the agent it read (swaps, transfers, fee
 * claims, launches, runs, and so every chat or run tool and automation that calls them), and
 * that a start makes: a listed agent refuses with 409 `invalid_state` naming its listing. The
 * database backs it for a request that read the agent before the listing committed (a trigger
 * on `wallet_op`, see src/adapters/db/migrations/Migration20261125100000_market.ts).
 *
 * @example
 * assertNotListed(agent, 'swap') // AgentListedError when agent.listingId is set
 */
export function assertNotListed(agent: { listingId?: string | null | undefined }, action: string): void {
  if (agent.listingId) throw new AgentListedError({ listingId: agent.listingId, action })
}

import { IdempotencyKeyReusedError, NotFoundError } from '../errors.ts'
import type { LaunchRequest, LaunchVenue } from './launch.schema.ts'
import { launchResource, type Launch } from './launchResource.ts'
import { launchMatches } from './launchRules.ts'
import type { LaunchPorts } from './ports.ts'
import { resolveLaunch } from './resolveLaunch.ts'
import { refuseRejected } from '../policies/policyGate.ts'
import type { Queryable } from '../billing/ports.ts'

export type LaunchTokenDeps = Pick<LaunchPorts, 'agents' | 'venues' | 'prices' | 'simulator' | 'spend' | 'actors'> & Partial<Pick<LaunchPorts, 'policies'>>
export type LaunchTokenInput = LaunchRequest<LaunchVenue> & {
  /** Derived from the Idempotency-Key or the tool call id: a retry finds the launch it made. */
  launchId: string
  /** Wait this long for the launch to end (live or failed); without it, answer once it started. */
  waitMs?: number | undefined
  /** The actor the launch is made for (a chat turn, a run): the launch is its child, and nothing waits here. */
  parentId?: string | undefined
}

/**
 * Launches a token from an agent wallet as a durable launch actor, after the request's checks,
 * the agent's policy, a simulation of the launch transaction and, for a self-funded seed, its
 * record against the 24-hour cap. A retry with the same launch id answers the launch it made
 * (and starts it, if a crash came between creating and starting it).
 *
 * @example
 * const launch = await launchToken(deps, { ...readLaunchRequest(accountId, 'venue-a', body), launchId })
 */
export async function launchToken(deps: LaunchTokenDeps, req: LaunchTokenInput): Promise<Launch> {
  const clean = Object.keys(req.fieldErrors).length === 0
  const existing = clean ? await deps.actors.find(req.launchId) : undefined
  let child: Launch | undefined
  if (existing) {
    if (existing.accountId !== req.accountId || !existing.isLaunch) throw new NotFoundError('Launch')
    // Only the same request may be answered with it (its first answer may have been lost).
    if (!launchMatches(existing.context, req)) throw new IdempotencyKeyReusedError()
  } else {
    const { input, usdValue, checkSpend } = await resolveLaunch(deps, req, req.launchId, req.parentId)
    await deps.simulator.simulate(input)
    // A self-funded seed leaves the wallet: checked and recorded against the 24-hour cap under
    // the agent's lock, as a wallet operation is.
    if (input.venue === 'self-funded') {
      const { policies } = deps
      const facts = input.policy?.facts
      const policyCheck = policies && facts
        ? async (db: Queryable) => refuseRejected(await policies.decide({ accountId: input.accountId, agentId: input.agentId, opId: input.launchId, parentId: req.parentId, facts }, db))
        : undefined
      await deps.spend.reserve({ launchId: input.launchId, accountId: input.accountId, agentId: input.agentId, usdValue, checkSpend, policyCheck })
    }
    const created = await deps.actors.create(input, req.parentId)
    if (created) child = launchResource(created)
  }
  if (child) return child
  const started = await deps.actors.start(req.launchId)
  const launch = req.waitMs && !req.parentId ? await deps.actors.waitEnd(req.launchId, req.waitMs) : started
  if (!launch) throw new NotFoundError('Launch')
  return launchResource(launch)
}

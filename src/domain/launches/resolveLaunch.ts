import { assertNotListed } from '../agents/listedAgent.ts'
import { ValidationError } from '../errors.ts'
import type { LaunchBody, LaunchInput, LaunchRequest, LaunchVenue } from './launch.schema.ts'
import { checkLaunchPolicy, launchFieldErrors, launchUsdValue, type LaunchFacts } from './launchRules.ts'
import type { LaunchAgent, LaunchPorts } from './ports.ts'
import { approvalUnder, checkOwnerPolicies, guardrailCheck, policyStamp } from '../policies/policyGate.ts'
import type { PolicyFacts } from '../policies/ports.ts'

export type ResolveLaunchDeps = Pick<LaunchPorts, 'agents' | 'venues' | 'prices' | 'spend'> & Partial<Pick<LaunchPorts, 'policies'>>

/** A launch request that passed its checks: the machine input, the USD leaving the wallet and the policy check of the spend. */
export type ResolvedLaunch = { input: LaunchInput; usdValue: string; checkSpend(spentTodayUsd: string): void }

/**
 * The checks a launch and its preview share: every bad field at once (the schema's, the
 * venue's and the account's, 422), then the agent policy with the spend of the last 24 hours
 * (403). Nothing is sent or recorded.
 *
 * @example
 * const { input, usdValue, checkSpend } = await resolveLaunch(deps, readLaunchRequest(accountId, 'venue-a', body), launchId)
 */
export async function resolveLaunch(deps: ResolveLaunchDeps, req: LaunchRequest, launchId: string, parentId?: string): Promise<ResolvedLaunch> {
  const facts = req.venue ? await lookupFacts(deps, req.accountId, req.venue, req.fields) : undefined
  const fieldErrors = { ...(facts && req.venue ? launchFieldErrors(req.venue, req.fields, facts) : {}), ...req.fieldErrors }
  if (Object.keys(fieldErrors).length > 0) throw new ValidationError(fieldErrors)
  // No field error: every field parsed and the agent was found.
  const body = req.fields as LaunchBody
  const venue = req.venue as LaunchVenue
  const agent = facts!.agent as LaunchAgent
  assertNotListed(agent, 'launch a token')
  // A paper agent's launch takes the same path; its simulator and effects fill it into the paper ledger (docs/api.md, "Paper agents").
  const input: LaunchInput = {
    launchId,
    accountId: req.accountId,
    agentId: body.agentId,
    venue,
    symbol: body.symbol,
    name: body.name,
    description: body.description ?? null,
    logoUrl: body.logoUrl ?? null,
    quote: body.quote,
    seedAmount: body.seedAmount ?? null,
  }
  const [quote, seedUsd] = await Promise.all([
    deps.prices.quoteToken(input.quote),
    venue === 'self-funded' ? deps.prices.seedUsd(input) : undefined,
  ])
  const usdValue = launchUsdValue(venue, seedUsd)
  // A seed above the policy's approval threshold waits for an owner (`awaiting_approval`) once the launch begins.
  // The owners' policies first (a reject is a 422 naming the rule); an accept skips the guardrails but for the kill switch.
  const tokensIn = venue === 'self-funded' ? [quote ?? { symbol: input.quote }] : []
  const moved: PolicyFacts = { kind: 'launch', tokensIn, tokensOut: [], usdValue }
  const decision = await checkOwnerPolicies(deps.policies, { accountId: req.accountId, agentId: input.agentId, opId: launchId, parentId, facts: moved })
  input.policy = policyStamp(decision, moved)
  input.approval = approvalUnder(decision, agent.policy, { opId: launchId, usdValue, now: Date.now() })
  const checkSpend = guardrailCheck(decision, agent.policy, (spentTodayUsd: string) =>
    checkLaunchPolicy(agent.policy, { quote: quote ?? { symbol: input.quote }, usdValue, spentTodayUsd }))
  checkSpend(await deps.spend.spentTodayUsd(input.agentId, launchId))
  return { input, usdValue, checkSpend }
}

/** Looks up what the well-formed fields name: a verified asset's symbol, the account's agent. */
async function lookupFacts(deps: ResolveLaunchDeps, accountId: string, venue: LaunchVenue, fields: Partial<LaunchBody>): Promise<LaunchFacts> {
  const [symbolVerified, agent] = await Promise.all([
    fields.symbol !== undefined ? deps.venues.isVerifiedSymbol(fields.symbol) : false,
    fields.agentId !== undefined ? deps.agents.forLaunch(accountId, fields.agentId) : ('unchecked' as const),
  ])
  return { allowedQuotes: deps.venues.quotes(venue), symbolVerified, agent }
}

import { assertNotListed } from '../agents/listedAgent.ts'
import { PaperUnsupportedError } from '../paper/errors.ts'
import { ChainNotConfiguredError, IdempotencyKeyReusedError, InvalidStateError, NotFoundError, ValidationError } from '../errors.ts'
import { DEFAULT_POLICY } from '../agents/policy.ts'
import { PolicyViolationError } from '../agents/policyCheck.ts'
import { formatUsd } from '../tokens/priceMath.ts'
import { NothingToClaimError } from './errors.ts'
import type { FeePorts } from './ports.ts'
import type { ClaimFeesInput, ClaimParams, PlanClaimInput } from './fees.schema.ts'
import { claimableTokens, claimFailed, claimMatches, claimResource, hasCreatorFees, planClaims, SELF_FUNDED_NOTE, unclaimed } from './feeRules.ts'
import { feeUsd } from './feeUsd.ts'

export type ClaimFeesDeps = Pick<FeePorts, 'agents' | 'tokens' | 'chain' | 'operations'>
export type Claim = ReturnType<typeof claimResource>

/**
 * Claims an agent's creator fees to its payout wallet (its own wallet when none is set) as one
 * durable `claim` wallet operation: one transaction per token with unclaimed fees (or the one
 * named). Answers when the operation ended (`confirmed`, with what each transaction paid), or
 * pending after the wait; waiting is the runtime's commit waiter, nothing polls. An operation id
 * that already exists (a retried Idempotency-Key, a retried tool call) answers that claim and
 * sends nothing new. Refused: 404 for another account's agent, 403 when its policy is paused,
 * 409 while another claim of the agent is in flight, 422 `nothing_to_claim`.
 *
 * @example
 * const claim = await claimFees(deps, { accountId, agentId, operationId: randomUUID() })
 */
export async function claimFees(deps: ClaimFeesDeps, input: ClaimFeesInput): Promise<Claim> {
  const existing = await deps.operations.find(input.operationId)
  if (existing && (existing.accountId !== input.accountId || !existing.isWalletOp)) throw new NotFoundError('Operation')
  // A retry finds its operation; planning again would see nothing left to claim.
  if (existing && !claimMatches(existing, input)) throw new IdempotencyKeyReusedError()
  const params: ClaimParams | Record<string, never> = existing ? {} : { claims: (await planClaim(deps, input, { inFlightCheck: input.operationId })).claims }
  const view = await deps.operations.start({ opId: input.operationId, accountId: input.accountId, agentId: input.agentId, params, parentId: input.parentId })
  if (view.status === 'failed') throw claimFailed(view.error)
  return claimResource(view, existing?.params ?? params)
}

/**
 * What a claim would send, with nothing sent: each token's expected amounts, where they go,
 * and their USD value now.
 *
 * @example
 * const { to, claims, claimableUsd } = await previewClaimFees(deps, { accountId, agentId })
 */
export async function previewClaimFees(deps: Omit<ClaimFeesDeps, 'operations'>, input: PlanClaimInput) {
  const plan = await planClaim(deps, input, { inFlightCheck: null })
  return { agentId: input.agentId, to: plan.claims[0]!.to, claims: plan.claims, claimableUsd: plan.claimableUsd }
}

/**
 * The claims of a request, read on chain at one block. A second claim planned while one is in
 * flight would read the same unclaimed fees and revert: `inFlightCheck` (the id of the claim
 * being started, whose own reservation a retry leaves out; null for a preview) answers that
 * early (the check that holds is made again under the agent's lock when the operation starts).
 */
async function planClaim(
  deps: Omit<ClaimFeesDeps, 'operations'> & Partial<Pick<ClaimFeesDeps, 'operations'>>,
  { accountId, agentId, tokenAddress }: PlanClaimInput,
  { inFlightCheck }: { inFlightCheck: string | null },
): Promise<ClaimParams & { claimableUsd: string }> {
  const agent = await deps.agents.getOwned(accountId, agentId)
  if (agent.status === 'deleted') throw new InvalidStateError({ event: 'claim fees', state: 'deleted' })
  assertNotListed(agent, 'claim fees')
  // A paper token's virtual pool keeps its fee in its reserves (no creator share), and a claim would reach the chain (docs/api.md, "Paper agents").
  if (agent.mode === 'paper') throw new PaperUnsupportedError('claim creator fees')
  if ({ ...DEFAULT_POLICY, ...agent.policy }.paused) {
    throw new PolicyViolationError({ rule: 'paused', message: 'The agent is paused by its policy kill switch.' })
  }
  const chain = deps.chain
  if (!chain) throw new ChainNotConfiguredError()
  if (inFlightCheck !== null) await deps.operations?.assertNoneInFlight(agentId, inFlightCheck)
  const tokens = await deps.tokens.ofAgent({ chainId: chain.chainId, agentId, tokenAddress })
  if (tokenAddress && tokens.length === 0) throw new ValidationError({ tokenAddress: 'Not a token this agent launched.' })
  if (tokenAddress && !hasCreatorFees(tokens[0]!.venue)) throw new NothingToClaimError(SELF_FUNDED_NOTE)
  const claimable = claimableTokens(tokens, agent.walletAddress)
  const at = await chain.atLatestBlock()
  const positions = await chain.positions(claimable, at.block)
  const to = agent.payoutWallet ?? agent.walletAddress
  const claims = planClaims({ tokens: claimable, positions, to, quoteDecimals: (s) => chain.quoteDecimals(s), named: tokenAddress })
  let usd = 0n
  for (const [i, t] of claimable.entries()) {
    const left = unclaimed(positions[i]!)
    if (left.quote === 0n && left.token === 0n) continue
    usd += (await feeUsd(at, chain.quoteDecimals(t.quoteSymbol), t, left.quote, left.token)) ?? 0n
  }
  return { claims, claimableUsd: formatUsd(usd) }
}

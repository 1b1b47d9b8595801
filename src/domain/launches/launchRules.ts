import { checkPolicy, type MovedToken } from '../agents/policyCheck.ts'
import type { Policy } from '../agents/policy.ts'
import { emptyFieldErrors } from '../fieldErrors.ts'
import type { FieldErrors } from '../errors.ts'
import { formatPrice, formatUsd, usdOf } from '../tokens/priceMath.ts'
import type { LaunchBody, LaunchInput, LaunchVenue } from './launch.schema.ts'
import type { LaunchAgent } from './ports.ts'

/** What the lookups found for the well-formed fields of a launch body (`agent: 'unchecked'` when `agentId` did not parse). */
export type LaunchFacts = {
  allowedQuotes: readonly string[]
  symbolVerified: boolean
  agent: LaunchAgent | undefined | 'unchecked'
}

/**
 * The venue's and the account's refusals of the well-formed fields of a launch body: a quote
 * asset the venue does not take, a seed on a venue that takes none, a verified asset's symbol,
 * no such agent, a deleted agent.
 *
 * @example
 * launchFieldErrors('venue-b', { quote: 'TSLAx' }, { allowedQuotes: ['ETH', 'USDC'], symbolVerified: false, agent: 'unchecked' })
 * // { quote: 'Not a quote asset of venue-b; ...' }
 */
export function launchFieldErrors(venue: LaunchVenue, fields: Partial<LaunchBody>, facts: LaunchFacts): FieldErrors {
  const out = emptyFieldErrors()
  if (fields.quote !== undefined && !facts.allowedQuotes.includes(fields.quote)) {
    out.quote = `Not a quote asset of ${venue}; one of ${facts.allowedQuotes.join(', ')} (GET /api/v1/quotes?venue=${venue}).`
  }
  if (fields.seedAmount !== undefined && venue !== 'self-funded') out.seedAmount = 'Only self-funded launches take a seed amount.'
  if (fields.symbol !== undefined && facts.symbolVerified) out.symbol = `${fields.symbol} is the symbol of a verified asset; a launch cannot take it.`
  if (facts.agent === undefined) out.agentId = 'No such agent in this account.'
  else if (facts.agent !== 'unchecked' && facts.agent.status === 'deleted') out.agentId = 'The agent is deleted.'
  return out
}

/** USD leaving the wallet: a self-funded launch's seed; the other venues move nothing but gas. */
export function launchUsdValue(venue: LaunchVenue, seedUsd: string | undefined): string {
  return venue === 'self-funded' && seedUsd !== undefined ? seedUsd : '0.00'
}

/**
 * The agent policy for a launch, as a launch and its preview both apply it: the kill switch,
 * the token lists for the quote asset, and the per-transaction and 24-hour USD caps on what
 * leaves the wallet (`launchUsdValue`). Pure; throws PolicyViolationError (403).
 *
 * @example
 * checkLaunchPolicy(agent.policy, { quote: { symbol: 'USDC', address: usdc }, usdValue: '250.00', spentTodayUsd: '0' })
 */
export function checkLaunchPolicy(
  policy: Partial<Policy>,
  move: { quote: MovedToken; usdValue: string; spentTodayUsd: string },
): void {
  checkPolicy(policy, { tokens: [move.quote], usdValue: move.usdValue, spentTodayUsd: move.spentTodayUsd })
}

/** A retried call (same launch id) must ask for the launch it made: same agent, venue and token. */
export function launchMatches(made: LaunchInput, asked: { venue: LaunchVenue; fields: Partial<LaunchBody> }): boolean {
  const f = asked.fields
  return (
    made.venue === asked.venue &&
    made.agentId === f.agentId &&
    made.symbol === f.symbol &&
    made.name === f.name &&
    made.quote === f.quote &&
    made.description === (f.description ?? null) &&
    made.logoUrl === (f.logoUrl ?? null) &&
    made.seedAmount === (f.seedAmount ?? null)
  )
}

const PROGRESS: Record<string, number> = { pending: 0, awaiting_approval: 0, simulating: 15, submitting: 40, confirming: 70, live: 100 }

/** `{ step, percent }` for a status; a failed launch keeps the percent of the step it reached. */
export function launchProgress(status: string, ctx: { txHash: string | null; gas: string | null }) {
  if (status !== 'failed') return { step: status, percent: PROGRESS[status] ?? 0 }
  const reached = ctx.txHash ? 'confirming' : ctx.gas ? 'submitting' : 'simulating'
  return { step: 'failed', percent: PROGRESS[reached] ?? 0 }
}

/**
 * Starting price and market cap of a launch: price of one whole token = market cap / supply,
 * kept at 18 decimals (a starting price is a tiny fraction of a cent, which base units of a
 * 6-decimal quote or cents cannot show).
 *
 * @example
 * startingFigures({ marketCap: 5n * 10n ** 18n, quoteDecimals: 18, totalSupply: 10n ** 27n, quoteUsd18: 3000n * 10n ** 18n })
 * // { price: { quote: '0.000000005', usd: '0.000015' }, marketCapUsd: '15000.00' }
 */
export function startingFigures(p: { marketCap: bigint; quoteDecimals: number; totalSupply: bigint; quoteUsd18: bigint }) {
  const marketCapUsd18 = usdOf(p.marketCap, p.quoteDecimals, p.quoteUsd18)
  const priceInQuote18 = (p.marketCap * 10n ** BigInt(18 - p.quoteDecimals) * 10n ** 18n) / p.totalSupply
  return {
    price: { quote: formatPrice(priceInQuote18), usd: formatPrice((marketCapUsd18 * 10n ** 18n) / p.totalSupply) },
    marketCapUsd: formatUsd(marketCapUsd18),
  }
}

import { OperationFailedError, type ServiceError } from '../errors.ts'
import { formatAmount, formatUsd } from '../tokens/priceMath.ts'
import { valueOf } from '../market/valuation.ts'
import type { QuotePrices } from '../tokens/ports.ts'
import { NothingToClaimError } from './errors.ts'
import { claimParamsSchema, type ClaimParams } from './fees.schema.ts'
import type { FeeTotalRow } from '../market/ports.ts'
import type { ClaimOpView, CreatorFeePosition, CreatorToken } from './ports.ts'

/** Launched tokens have 18 decimals (LaunchToken, SelfFundedToken). */
export const TOKEN_DECIMALS = 18

export const NO_FEES: CreatorFeePosition = { earned: 0n, claimed: 0n, earnedToken: 0n, claimedToken: 0n }

export const SELF_FUNDED_NOTE =
  'Self-funded tokens have no creator fee stream: their liquidity is locked in a plain pool and trades pay only the 0.3% LP fee into it.'

/** True for venues whose tokens pay their creator a share of trade fees (self-funded pools pay only the LP fee). */
export const hasCreatorFees = (venue: string): venue is 'venue-a' | 'venue-b' => venue === 'venue-a' || venue === 'venue-b'

/** What is left to claim of a position: quote asset and launched token, base units. */
export const unclaimed = (f: CreatorFeePosition) => ({ quote: f.earned - f.claimed, token: f.earnedToken - f.claimedToken })

/**
 * One claim per token the agent's wallet created (only the on-chain creator can claim) with
 * unclaimed fees, all paid `to` the payout wallet; `positions[i]` is `tokens[i]`'s. Throws
 * `nothing_to_claim` when none is left.
 *
 * @example
 * planClaims({ tokens, positions, creator: agent.walletAddress, to: payout, quoteDecimals, named: undefined })
 */
export function planClaims(p: {
  tokens: CreatorToken[]
  positions: CreatorFeePosition[]
  to: string
  quoteDecimals: (symbol: string) => number | undefined
  named: string | undefined
}): ClaimParams['claims'] {
  const claims: ClaimParams['claims'] = []
  for (const [i, t] of p.tokens.entries()) {
    const left = unclaimed(p.positions[i]!)
    if ((left.quote === 0n && left.token === 0n) || !hasCreatorFees(t.venue)) continue
    const decimals = p.quoteDecimals(t.quoteSymbol) ?? 18
    claims.push({
      tokenAddress: t.address,
      symbol: t.symbol,
      venue: t.venue,
      quote: t.quoteSymbol,
      quoteDecimals: decimals,
      to: p.to.toLowerCase(),
      expectedAmount: formatAmount(left.quote, decimals),
      expectedTokenAmount: formatAmount(left.token, TOKEN_DECIMALS),
    })
  }
  if (claims.length === 0) {
    throw new NothingToClaimError(p.named ? 'This token has no unclaimed creator fees.' : "None of this agent's tokens has unclaimed creator fees.")
  }
  return claims
}

/** The tokens of a claim the agent may make: those with a fee stream that its own wallet created. */
export const claimableTokens = (tokens: CreatorToken[], wallet: string) =>
  tokens.filter((t) => hasCreatorFees(t.venue) && t.creatorAddress.toLowerCase() === wallet.toLowerCase())

/**
 * True when a claim operation found by its id answers this request: the same agent, and the
 * same single token when the request names one (a retry whose first answer was lost).
 */
export function claimMatches(op: { agentId: string; params: unknown }, request: { agentId: string; tokenAddress?: string | undefined }): boolean {
  const tokens = (claimParamsSchema.safeParse(op.params).data?.claims ?? []).map((c) => c.tokenAddress.toLowerCase())
  const named = request.tokenAddress?.toLowerCase()
  return op.agentId === request.agentId && (named === undefined || (tokens.length === 1 && tokens[0] === named))
}

/** A claim that ended `failed`, as the error the caller sees. */
export function claimFailed(error: { code: string; message: string } | null): ServiceError {
  const e = error ?? { code: 'claim_failed', message: 'The claim failed.' }
  if (/nothing to claim/i.test(e.message)) return new NothingToClaimError()
  return new OperationFailedError(e)
}

/**
 * A claim as the API answers it: the amounts each transaction actually paid once confirmed,
 * the planned amounts (no tx hash yet) while it is pending.
 */
export function claimResource(view: ClaimOpView, params: unknown) {
  const planned = claimParamsSchema.safeParse(params)
  const claims = Array.isArray(view.claims)
    ? view.claims
    : (planned.data?.claims ?? []).map((c) => ({
        tokenAddress: c.tokenAddress,
        symbol: c.symbol,
        venue: c.venue,
        quote: c.quote,
        amount: c.expectedAmount,
        tokenAmount: c.expectedTokenAmount,
        to: c.to,
        txHash: null,
      }))
  return {
    id: view.id,
    agentId: view.agentId,
    status: view.status,
    txHash: view.txHash,
    to: planned.data?.claims[0]?.to ?? null,
    claims,
    gasUsed: view.gasUsed ?? null,
    blockNumber: view.blockNumber ?? null,
    // The owners' policies' decision (docs/api.md, "Policies"), on a claim recorded since they exist.
    ...(view.policy ? { policy: view.policy } : {}),
  }
}

type Sums = { trades: number; creator: bigint; platform: bigint }
const zero = (): Sums => ({ trades: 0, creator: 0n, platform: 0n })
const VENUES = ['venue-a', 'venue-b', 'self-funded']

/**
 * Platform fee totals by venue and overall (creator and platform halves in USD, all time and
 * the last 24 h) from the indexed trades' fee groups; groups whose quote asset has no USD price
 * are left out and counted.
 *
 * @example
 * const { venues, totals, unpricedGroups } = sumFeeTotals(prices, rows)
 */
export function sumFeeTotals(prices: QuotePrices, rows: FeeTotalRow[]) {
  const venues = new Map<string, { all: Sums; day: Sums }>(VENUES.map((v) => [v, { all: zero(), day: zero() }]))
  let unpriced = 0
  for (const r of rows) {
    const v = venues.get(r.venue) ?? { all: zero(), day: zero() }
    venues.set(r.venue, v)
    const usd = (amount: bigint) => valueOf(prices, { amount, asset: r.feeAsset, quoteSymbol: r.quoteSymbol, price: r.price })
    const [c, p, c24, p24] = [usd(r.creator), usd(r.platform), usd(r.creator24h), usd(r.platform24h)]
    if (c === null) unpriced++
    add(v.all, { trades: r.trades, creator: c ?? 0n, platform: p ?? 0n })
    add(v.day, { trades: r.trades24h, creator: c24 ?? 0n, platform: p24 ?? 0n })
  }
  const total = { all: zero(), day: zero() }
  for (const v of venues.values()) {
    add(total.all, v.all)
    add(total.day, v.day)
  }
  return {
    venues: [...venues.entries()].map(([venue, v]) => ({ venue, ...sumsView(v.all), last24h: sumsView(v.day) })),
    totals: { ...sumsView(total.all), last24h: sumsView(total.day) },
    /** Token groups left out because their quote asset has no USD price. */
    unpricedGroups: unpriced,
  }
}

function add(to: Sums, s: Sums) {
  to.trades += s.trades
  to.creator += s.creator
  to.platform += s.platform
}

const sumsView = (s: Sums) => ({
  trades: s.trades,
  creatorFeesUsd: formatUsd(s.creator),
  platformFeesUsd: formatUsd(s.platform),
  totalFeesUsd: formatUsd(s.creator + s.platform),
})

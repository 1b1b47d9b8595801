import { ServiceError } from '../errors.ts'
import { DEFAULT_POLICY, isAddressEntry, usdCents as cents, type Policy } from './policy.ts'

/** A refusal by the agent's policy: 403 `policy_violation`, naming the rule. */
export class PolicyViolationError extends ServiceError {
  readonly rule: string
  constructor({ rule, message }: { rule: keyof Policy; message: string }) {
    super(`${message} (policy rule "${rule}")`, { code: 'policy_violation', status: 403 })
    this.rule = rule
  }
}

/** A token a move touches: its address (WETH's for ETH) and, for lists written before they held addresses, its symbol. */
export type MovedToken = { symbol?: string | undefined; address?: string | undefined; verified?: boolean | undefined }

export type MoneyMove = {
  /** Tokens the move touches. */
  tokens: ReadonlyArray<MovedToken>
  /** USD value of what leaves the wallet, decimal string. */
  usdValue: string
  /** Price impact in basis points, where there is one (swaps). */
  priceImpactBps?: number | undefined
  /** USD already spent in the last 24 hours, decimal string. */
  spentTodayUsd: string
}

/** ETH and WETH are one asset for the lists. */
const sameAsset = (symbol: string | undefined) => {
  const s = symbol?.toLowerCase()
  return s === 'weth' ? 'eth' : s
}

/**
 * Lists hold addresses, matched against the token's address (WETH's for ETH, so ETH and WETH
 * are one asset). A symbol entry can only be a list stored before symbols were resolved: it
 * fails safe, denying any token of that symbol and allowing only a verified one.
 */
const matches = (list: readonly string[], t: MovedToken, kind: 'allow' | 'deny') =>
  list.some((entry) => {
    if (isAddressEntry(entry)) return entry.toLowerCase() === t.address?.toLowerCase()
    return sameAsset(entry) === sameAsset(t.symbol) && (kind === 'deny' || t.verified === true)
  })

/**
 * The token lists alone (a quote moves nothing, yet must not price a denied token).
 *
 * @example
 * checkTokenLists(agent.policy, [tokenIn, tokenOut])
 */
export function checkTokenLists(stored: Partial<Policy> | null | undefined, tokens: ReadonlyArray<MovedToken>): void {
  const policy: Policy = { ...DEFAULT_POLICY, ...stored }
  for (const t of tokens) {
    if (matches(policy.deny_tokens, t, 'deny')) {
      throw new PolicyViolationError({ rule: 'deny_tokens', message: `${t.symbol ?? t.address} is on the agent's deny list.` })
    }
    if (policy.allow_tokens.length > 0 && !matches(policy.allow_tokens, t, 'allow')) {
      throw new PolicyViolationError({ rule: 'allow_tokens', message: `${t.symbol ?? t.address} is not on the agent's allow list.` })
    }
  }
}

/**
 * Checks one money move against the agent's policy: kill switch, deny and allow lists, the
 * per-transaction and 24-hour USD caps, and the price impact cap. Pure; throws on the first
 * rule broken.
 *
 * @example
 * checkPolicy(agent.policy, { tokens: [{ symbol: 'ETH' }], usdValue: '250.00', spentTodayUsd: '0' })
 */
export function checkPolicy(stored: Partial<Policy> | null | undefined, move: MoneyMove): void {
  const policy: Policy = { ...DEFAULT_POLICY, ...stored }
  if (policy.paused) throw new PolicyViolationError({ rule: 'paused', message: 'The agent is paused by its policy kill switch.' })
  checkTokenLists(policy, move.tokens)
  const value = cents(move.usdValue)
  if (value > cents(policy.max_trade_usd)) {
    throw new PolicyViolationError({ rule: 'max_trade_usd', message: `$${move.usdValue} exceeds the per-transaction cap of $${policy.max_trade_usd}.` })
  }
  if (cents(move.spentTodayUsd) + value > cents(policy.max_daily_usd)) {
    throw new PolicyViolationError({
      rule: 'max_daily_usd',
      message: `$${move.usdValue} on top of $${move.spentTodayUsd} in the last 24 hours exceeds the daily cap of $${policy.max_daily_usd}.`,
    })
  }
  if (move.priceImpactBps !== undefined && move.priceImpactBps > policy.max_price_impact_bps) {
    throw new PolicyViolationError({
      rule: 'max_price_impact_bps',
      message: `A price impact of ${move.priceImpactBps} bps exceeds the cap of ${policy.max_price_impact_bps} bps.`,
    })
  }
}

import { ServiceError } from '../errors.ts'
import { DEFAULT_POLICY, type Policy } from './policy.ts'

/** A refusal by the agent's policy: 403 `policy_violation`, naming the rule. */
export class PolicyViolationError extends ServiceError {
  readonly rule: string
  constructor({ rule, message }: { rule: keyof Policy; message: string }) {
    super(`${message} (policy rule "${rule}")`, { code: 'policy_violation', status: 403 })
    this.rule = rule
  }
}

export type MoneyMove = {
  /** Tokens the move touches, as symbols and/or lower-case addresses (both forms are checked). */
  tokens: ReadonlyArray<{ symbol?: string | undefined; address?: string | undefined }>
  /** USD value of what leaves the wallet, decimal string. */
  usdValue: string
  /** Price impact in basis points, where there is one (swaps). */
  priceImpactBps?: number | undefined
  /** USD already spent in the last 24 hours, decimal string. */
  spentTodayUsd: string
}

const cents = (usd: string) => {
  const [i, f = ''] = usd.split('.')
  return BigInt(i || '0') * 100n + BigInt((f + '00').slice(0, 2))
}

const matches = (list: readonly string[], t: { symbol?: string | undefined; address?: string | undefined }) =>
  list.some((entry) => {
    const e = entry.toLowerCase()
    return e === t.symbol?.toLowerCase() || e === t.address?.toLowerCase()
  })

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
  for (const t of move.tokens) {
    if (matches(policy.deny_tokens, t)) {
      throw new PolicyViolationError({ rule: 'deny_tokens', message: `${t.symbol ?? t.address} is on the agent's deny list.` })
    }
    if (policy.allow_tokens.length > 0 && !matches(policy.allow_tokens, t)) {
      throw new PolicyViolationError({ rule: 'allow_tokens', message: `${t.symbol ?? t.address} is not on the agent's allow list.` })
    }
  }
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

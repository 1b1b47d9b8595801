/**
 * The rules behind /signals, pure and unit-tested (signalRules.test.ts). Inputs are numbers in
 * USD (or ratios) already derived from the index.
 */

/** Price change as a decimal (0.125 = +12.5%), null without both prices. */
export function changeOf(now: bigint | null, then: bigint | null): number | null {
  if (now === null || then === null || then === 0n) return null
  return Number(((now - then) * 1_000_000n) / then) / 1_000_000
}

/** The AMM's LP fee (AmmPair: 0.3% of each swap's input after the fee hook). */
export const LP_FEE = 0.003

/**
 * A pool's APY in percent: its last 24 h of LP fee income (volume x LP_FEE) plus creator-fee-free
 * income over its TVL, annualised without compounding (x 365). 0 for an empty pool.
 */
export function poolApyPercent(volume24hUsd: number, tvlUsd: number): number {
  if (!(tvlUsd > 0)) return 0
  return Math.round(((volume24hUsd * LP_FEE * 365) / tvlUsd) * 100 * 100) / 100
}

/**
 * Risk of providing liquidity to a pool: `high` under $10,000 of TVL (thin pools move and can be
 * drained by one trade); `medium` under $100,000 or when the token is not verified (an
 * unverified launch can lose its buyers overnight); `low` otherwise.
 */
export function poolRisk(tvlUsd: number, verified: boolean): 'low' | 'medium' | 'high' {
  if (tvlUsd < 10_000) return 'high'
  if (tvlUsd < 100_000 || !verified) return 'medium'
  return 'low'
}

/** Share of tokens whose price rose, among those with a change; null without any. */
export function breadth(changes: readonly number[]): number | null {
  if (changes.length === 0) return null
  return changes.filter((c) => c > 0).length / changes.length
}

/** Median absolute change (a decimal); null without any. */
export function medianAbsChange(changes: readonly number[]): number | null {
  if (changes.length === 0) return null
  const s = changes.map(Math.abs).sort((a, b) => a - b)
  const mid = Math.floor(s.length / 2)
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2
}

/** Median absolute 24 h change at which the calm part of the index reaches zero. */
export const VOLATILITY_CEILING = 0.5

/**
 * Fear/greed index, 0 (extreme fear) to 100 (extreme greed), over the launched tokens' 24 h
 * changes: 60% breadth (share of tokens up) and 40% calm (1 - median |change| / 0.5, floored at
 * 0), rounded. Null without any change.
 *
 * @example
 * fearGreed([0.1, 0.2, -0.05]) // 60% x 2/3 + 40% x (1 - 0.1/0.5) = 72
 */
export function fearGreed(changes: readonly number[]): number | null {
  const b = breadth(changes)
  const v = medianAbsChange(changes)
  if (b === null || v === null) return null
  return Math.round(100 * (0.6 * b + 0.4 * Math.max(0, 1 - v / VOLATILITY_CEILING)))
}

/** Sentiment of a 0-100 index: bullish at 60 and above, bearish at 40 and below. */
export const indexSentiment = (v: number): 'bullish' | 'bearish' | 'neutral' => (v >= 60 ? 'bullish' : v <= 40 ? 'bearish' : 'neutral')
/** Sentiment of a signed flow. */
export const flowSentiment = (v: number): 'bullish' | 'bearish' | 'neutral' => (v > 0 ? 'bullish' : v < 0 ? 'bearish' : 'neutral')

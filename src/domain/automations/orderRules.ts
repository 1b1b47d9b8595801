import { formatUnits, parseUnits } from 'viem'
import type { AutomationTrigger, BracketSide } from './automation.types.ts'

type Trailing = Extract<AutomationTrigger, { type: 'trailing_stop' }>
type Bracket = Extract<AutomationTrigger, { type: 'bracket' }>

/** ETH a share of an ETH holding leaves in the wallet, so the wallet can still pay for gas. */
export const ETH_GAS_RESERVE = '0.005'

/** Shares are kept to 6 decimals (1 = the whole holding). */
const SHARE_SCALE = 1_000_000n

/**
 * The price at or below which a trailing stop fires, for the highest price seen `high`: `high`
 * less `trailPct` % of it, or less `trailUsd`.
 *
 * @example
 * trailingStopLevel({ type: 'trailing_stop', mint: 'ETH', trailPct: 10 }, '2000') // 1800
 */
export function trailingStopLevel(t: Trailing, high: string): number {
  const h = Number(high)
  return t.trailPct !== undefined ? h * (1 - t.trailPct / 100) : h - Number(t.trailUsd ?? 0)
}

/**
 * The side of a bracket that `priceUsd` meets, or null. The stop-loss side is looked at first:
 * should one price event ever meet both (a take-profit at or under the stop, as a PATCH could
 * make it), the protective exit wins, as backtesters assume when a bar touches both levels (the
 * worst case for the holder). Creation refuses a take-profit at or under the stop-loss.
 *
 * @example
 * bracketSide({ type: 'bracket', mint: 'X', takeProfitUsd: '2', stopLossUsd: '1' }, '0.9') // 'stop_loss'
 */
export function bracketSide(t: Bracket, priceUsd: string): BracketSide | null {
  const p = Number(priceUsd)
  if (p <= Number(t.stopLossUsd)) return 'stop_loss'
  if (p >= Number(t.takeProfitUsd)) return 'take_profit'
  return null
}

/**
 * Whether a block's price means anything to an armed trailing stop or bracket (what the trigger
 * feed sends it): a new high, a trailing stop's level reached, a bracket side met.
 *
 * @example
 * priceMatters({ type: 'trailing_stop', mint: 'ETH', trailPct: 10 }, '2000', '2100') // true (a new high)
 */
export function priceMatters(t: AutomationTrigger, high: string | null | undefined, priceUsd: string): boolean {
  if (t.type === 'bracket') return bracketSide(t, priceUsd) !== null
  if (t.type !== 'trailing_stop') return false
  if (!high) return true
  return Number(priceUsd) > Number(high) || Number(priceUsd) <= trailingStopLevel(t, high)
}

/**
 * `share` of a holding of `balance` (whole units, `decimals`), in whole units, rounded down; of
 * ETH, the share of what is above ETH_GAS_RESERVE. "0" when nothing is left to sell.
 *
 * @example
 * shareOfHolding({ balance: '10', decimals: 18, share: 0.5, native: false }) // '5'
 */
export function shareOfHolding(h: { balance: string; decimals: number; share: number; native: boolean }): string {
  let base = parseUnits(h.balance, h.decimals)
  if (h.native) base -= parseUnits(ETH_GAS_RESERVE, 18)
  if (base <= 0n) return '0'
  const share = BigInt(Math.round(h.share * Number(SHARE_SCALE)))
  return formatUnits((base * share) / SHARE_SCALE, h.decimals)
}

/**
 * The amount of slice `slice` (1-based) of a TWAP of `slices` over `total` (whole units,
 * `decimals`): the total divided evenly in base units, the last slice taking what rounding left,
 * so the slices add up to the total exactly and never more.
 *
 * @example
 * twapSliceAmount({ total: '1', decimals: 6, slices: 3, slice: 3 }) // '0.333334'
 */
export function twapSliceAmount(p: { total: string; decimals: number; slices: number; slice: number }): string {
  const total = parseUnits(p.total, p.decimals)
  const each = total / BigInt(p.slices)
  if (p.slice > p.slices) return '0'
  return formatUnits(p.slice === p.slices ? total - each * BigInt(p.slices - 1) : each, p.decimals)
}

/** A TWAP's slices at even intervals over `overSeconds`: one every whole `overSeconds / slices` seconds (the first at once). */
export const twapEverySeconds = (overSeconds: number, slices: number) => Math.max(1, Math.floor(overSeconds / slices))

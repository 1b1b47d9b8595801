import type { BracketSide } from './automation.types.ts'
import type { AutomationState } from './ports.ts'
import { trailingStopLevel } from './orderRules.ts'

type SideStatus = 'waiting' | 'firing' | 'filled' | 'cancelled'

/** A price as the views show it: a decimal string of 15 significant digits (a float's noise left out), never an exponent. */
export function usdText(n: number): string {
  if (n <= 0) return '0'
  const short = String(Number(n.toPrecision(15)))
  return short.includes('e') ? Number(n.toPrecision(15)).toFixed(18).replace(/\.?0+$/, '') : short
}

/** A bracket side's status: the side that fired (filled, or firing now) cancelled the other as it started. */
function sideStatus(a: AutomationState, side: BracketSide): SideStatus {
  const filled = a.firings.find((f) => f.outcome === 'ok' && f.side)
  const firing = a.current?.source.source === 'price' ? a.current.source.side : undefined
  const taken = filled?.side ?? firing
  if (taken) return taken === side ? (filled ? 'filled' : 'firing') : 'cancelled'
  return a.status === 'cancelled' || a.status === 'completed' ? 'cancelled' : 'waiting'
}

/**
 * What a protective or sliced order waits for, as GET /automations/:id shows it (nothing for the
 * other kinds): `level` (the price it fires at: a stop-loss's or take-profit's, a trailing stop's
 * from its `high`), `high` (a trailing stop's highest price since armed), a bracket's two sides
 * (`takeProfit`, `stopLoss`: level and status), a TWAP's `slices`, `slicesDone`, `slicesLeft`;
 * and `share` (of the holding a protective order sells).
 *
 * @example
 * orderView(stopLoss) // { share: 1, level: '1800' }
 */
export function orderView(a: AutomationState): Record<string, unknown> {
  const t = a.trigger
  const order = a.order
  if (!order) return {}
  if (order.mirror) return { ...order.mirror, leaderAgentId: t.type === 'leader_swap' ? t.leaderAgentId : null, lastLeaderSwap: a.lastLeaderSwap ?? null }
  if (order.twap) {
    const done = Math.min(a.runCount, order.twap.slices)
    return { slices: order.twap.slices, slicesDone: done, slicesLeft: a.status === 'cancelled' ? 0 : order.twap.slices - done, maxPriceImpactBps: order.twap.maxPriceImpactBps, amountIn: order.twap.amountIn }
  }
  const share = { share: order.share ?? 1 }
  if (t.type === 'price_threshold') return { ...share, level: t.priceUsd }
  if (t.type === 'trailing_stop') {
    const high = a.high ?? order.armedPriceUsd ?? null
    return { ...share, high, level: high === null ? null : usdText(trailingStopLevel(t, high)), ...(t.trailPct !== undefined ? { trailPct: t.trailPct } : { trailUsd: t.trailUsd }) }
  }
  if (t.type === 'bracket') {
    return { ...share, takeProfit: { level: t.takeProfitUsd, status: sideStatus(a, 'take_profit') }, stopLoss: { level: t.stopLossUsd, status: sideStatus(a, 'stop_loss') } }
  }
  return share
}

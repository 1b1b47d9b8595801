import type { AutomationTrigger } from '../automations/automation.types.ts'
import { bracketSide, trailingStopLevel } from '../automations/orderRules.ts'

/** One candle as a backtest replays it: its start (Unix seconds) and its close in USD. */
export type BacktestCandle = { t: number; closeUsd: number }

/** `buy`: USDC into the token; `sell`: the token into USDC. */
export type Side = 'buy' | 'sell'

/** An automation kind as a backtest runs it, between the candles' token and USDC (see backtestPlan.ts). */
export type BacktestPlan =
  | { kind: 'dca'; side: Side; amountPerRun: number; everySeconds: number; maxRuns: number | null }
  | { kind: 'twap'; side: Side; amountIn: number; slices: number; everySeconds: number; maxPriceImpactBps: number }
  | { kind: 'limit'; side: Side; amountIn: number; operator: 'gte' | 'lte'; priceUsd: number }
  | { kind: 'stop_loss' | 'take_profit'; priceUsd: number; share: number }
  | { kind: 'trailing_stop'; trailPct?: number | undefined; trailUsd?: string | undefined; share: number }
  | { kind: 'bracket'; takeProfitUsd: string; stopLossUsd: string; share: number }

export type BacktestOptions = {
  /** What the wallet holds at the start: the token and USDC. */
  start: { token: number; usdc: number }
  /** The pool's fee, taken from the amount in. */
  feeBps: number
  /** A constant-product pool's USDC side in USD (the token side worth the same at each close); null: no price impact. */
  liquidityUsd: number | null
  /** The candles' interval (seconds). */
  interval: number
}

export type Fill = { at: string; side: Side; amountIn: number; amountOut: number; priceUsd: number; slice?: number }
export type Skip = { at: string; reason: string }

/** Rounded for the answer: 10 significant digits (float noise left out); the same inputs give the same figures. */
export const round = (n: number) => Number(n.toPrecision(10))
const iso = (t: number) => new Date(t * 1000).toISOString()

/**
 * A swap at a candle's close `price`: the fee off the amount in, then the constant-product
 * output against a pool whose USDC side is `liquidityUsd` (and token side the same value at
 * `price`). Answers the amount out and the price impact (bps) the pool's curve cost.
 *
 * @example
 * swapAt({ side: 'buy', amountIn: 100, price: 2, feeBps: 30, liquidityUsd: null }) // { amountOut: 49.85, impactBps: 0 }
 */
export function swapAt(p: { side: Side; amountIn: number; price: number; feeBps: number; liquidityUsd: number | null }): { amountOut: number; impactBps: number } {
  const inUsd = (p.side === 'buy' ? p.amountIn : p.amountIn * p.price) * (1 - p.feeBps / 10_000)
  const kept = p.liquidityUsd === null ? 1 : p.liquidityUsd / (p.liquidityUsd + inUsd)
  return { amountOut: (p.side === 'buy' ? inUsd / p.price : inUsd) * kept, impactBps: Math.round((1 - kept) * 10_000) }
}

/** The largest fall from a running peak, in percent of that peak. */
export function maxDrawdownPct(values: readonly number[]): number {
  let peak = -Infinity
  let worst = 0
  for (const v of values) {
    peak = Math.max(peak, v)
    if (peak > 0) worst = Math.max(worst, (peak - v) / peak)
  }
  return round(worst * 100)
}

/** The timer firings (ticks) a candle [t, t + interval) holds, on a grid from `fromT` every `every` seconds. */
function ticksIn(t: number, interval: number, fromT: number, every: number): number[] {
  const first = Math.max(0, Math.ceil((t - fromT) / every))
  const out: number[] = []
  for (let k = first; fromT + k * every < t + interval; k++) out.push(k)
  return out
}

/**
 * Replays `plan` over `candles` (oldest first; the grid of timers starts at the first candle):
 * every decision is taken at a candle's close, as the trigger feed takes it at a block's price,
 * and every swap fills at that close (swapAt). A swap the wallet cannot pay is skipped. Pure and
 * deterministic: the same candles and plan give the same fills.
 *
 * @example
 * simulate({ kind: 'stop_loss', priceUsd: 90, share: 1 }, candles, { start: { token: 1, usdc: 0 }, feeBps: 0, liquidityUsd: null, interval: 60 })
 */
export function simulate(plan: BacktestPlan, candles: readonly BacktestCandle[], o: BacktestOptions) {
  let token = o.start.token
  let usdc = o.start.usdc
  const fills: Fill[] = []
  const skipped: Skip[] = []
  const values: number[] = []
  let done = false
  let runs = 0
  let high: number | null = null
  const fromT = candles[0]?.t ?? 0
  const swap = (c: BacktestCandle, side: Side, amountIn: number, slice?: number) => {
    const held = side === 'buy' ? usdc : token
    if (!(amountIn > 0) || amountIn > held + 1e-12) return void skipped.push({ at: iso(c.t), reason: `insufficient ${side === 'buy' ? 'USDC' : 'token'}: holds ${round(held)}, needs ${round(amountIn)}` })
    const { amountOut, impactBps } = swapAt({ side, amountIn, price: c.closeUsd, feeBps: o.feeBps, liquidityUsd: o.liquidityUsd })
    if (plan.kind === 'twap' && impactBps > plan.maxPriceImpactBps) return void skipped.push({ at: iso(c.t), reason: `price_impact_exceeded: slice ${slice} ${impactBps} bps` })
    if (side === 'buy') [usdc, token] = [usdc - amountIn, token + amountOut]
    else [token, usdc] = [token - amountIn, usdc + amountOut]
    fills.push({ at: iso(c.t), side, amountIn: round(amountIn), amountOut: round(amountOut), priceUsd: round(c.closeUsd), ...(slice ? { slice } : {}) })
  }
  for (const c of candles) {
    const p = c.closeUsd
    if (plan.kind === 'dca' || plan.kind === 'twap') {
      const every = plan.everySeconds
      const cap = plan.kind === 'dca' ? (plan.maxRuns ?? Infinity) : plan.slices
      for (const _ of ticksIn(c.t, o.interval, fromT, every)) {
        if (runs >= cap) break
        runs++
        if (plan.kind === 'dca') swap(c, plan.side, plan.amountPerRun)
        else swap(c, plan.side, runs === plan.slices ? plan.amountIn - (plan.amountIn / plan.slices) * (plan.slices - 1) : plan.amountIn / plan.slices, runs)
      }
    } else if (!done) {
      const sell = (share: number) => ((done = true), swap(c, 'sell', token * share))
      if (plan.kind === 'limit' && (plan.operator === 'lte' ? p <= plan.priceUsd : p >= plan.priceUsd)) ((done = true), swap(c, plan.side, plan.amountIn))
      if (plan.kind === 'stop_loss' && p <= plan.priceUsd) sell(plan.share)
      if (plan.kind === 'take_profit' && p >= plan.priceUsd) sell(plan.share)
      if (plan.kind === 'bracket' && bracketSide({ type: 'bracket', mint: '', takeProfitUsd: plan.takeProfitUsd, stopLossUsd: plan.stopLossUsd }, String(p))) sell(plan.share)
      if (plan.kind === 'trailing_stop') {
        high = Math.max(high ?? p, p)
        const t: AutomationTrigger = { type: 'trailing_stop', mint: '', trailPct: plan.trailPct, trailUsd: plan.trailUsd }
        if (p <= trailingStopLevel(t, String(high))) sell(plan.share)
      }
    }
    values.push(usdc + token * p)
  }
  const first = candles[0]?.closeUsd ?? 0
  const startValue = o.start.usdc + o.start.token * first
  const end = values.at(-1) ?? startValue
  // Buy and hold: the starting value all in the token at the first close, held to the end.
  const held = candles.map((c) => (first > 0 ? (startValue * c.closeUsd) / first : startValue))
  return {
    fills, skipped,
    final: { token: round(token), usdc: round(usdc), valueUsd: round(end) },
    startValueUsd: round(startValue),
    pnlUsd: round(end - startValue),
    maxDrawdownPct: maxDrawdownPct(values),
    buyAndHold: { pnlUsd: round((held.at(-1) ?? startValue) - startValue), maxDrawdownPct: maxDrawdownPct(held) },
  }
}

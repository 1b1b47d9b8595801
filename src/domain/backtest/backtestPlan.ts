import { z } from 'zod'
import { ServiceError, ValidationError, type FieldErrors } from '../errors.ts'
import { createAutomationSchema } from '../automations/automation.schema.ts'
import { twapEverySeconds } from '../automations/orderRules.ts'
import { tokenRef } from '../swaps/swap.schema.ts'
import { INTERVAL_NAMES, type Interval } from '../intel/candleRules.ts'
import type { BacktestPlan, Side } from './simulate.ts'
import type { AutomationKind } from '../automations/automation.types.ts'

/** The automation kinds (AUTOMATION_KINDS) a backtest replays. */
export const BACKTEST_KINDS = ['dca', 'limit', 'stop_loss', 'take_profit', 'trailing_stop', 'bracket', 'twap'] as const satisfies readonly AutomationKind[]
/** The longest range a backtest replays: 366 days (and at most MAX_CANDLES candles of its interval). */
export const MAX_BACKTEST_DAYS = 366

const time = z.iso.datetime({ offset: true, message: 'An ISO 8601 time, such as 2026-12-01T09:00:00Z.' })
const amount = z.string('A decimal amount as a string, such as "1.5".').regex(/^\d{1,30}(\.\d{1,18})?$/, 'A decimal amount as a string, such as "1.5".')
const usd = amount.refine((v) => /[1-9]/.test(v), 'Must be greater than 0.')

/** `POST /backtests`: an automation's creation body (no agent), the range and how to replay it. */
export const backtestSchema = z.strictObject({
  automation: createAutomationSchema.omit({ agent_id: true, agentId: true }),
  /** The token whose candles are replayed: the kind's token that is not USDC (given: must be that one). */
  token: tokenRef.optional(),
  from: time,
  to: time,
  interval: z.enum(INTERVAL_NAMES as [Interval, ...Interval[]], `One of ${INTERVAL_NAMES.join(', ')}.`).optional(),
  /** What the wallet holds at the start (default: what the automation needs, see docs/api.md). */
  holdings: z.strictObject({ token: amount.optional(), usdc: amount.optional() }).optional(),
  /** A constant-product pool's USDC side in USD, for the price impact (default: none). */
  liquidityUsd: usd.optional(),
})
export type BacktestBody = z.infer<typeof backtestSchema>

/** 422 `backtest_unsupported`: a kind or a pair a backtest does not replay. */
export class BacktestUnsupportedError extends ServiceError {
  constructor(fieldErrors: FieldErrors) {
    super(`Not something a backtest replays: ${Object.values(fieldErrors).join(' ')}`, { code: 'backtest_unsupported', status: 422, fieldErrors })
  }
}

/** 422 `backtest_range_too_long`. */
export class BacktestRangeError extends ServiceError {
  constructor(message: string) {
    super(message, { code: 'backtest_range_too_long', status: 422, fieldErrors: { to: message } })
  }
}

type Pair = { tokenIn: string; tokenOut: string }

/**
 * The automation of a backtest as a plan over one token against USDC, with the token (its
 * reference as written) and what the wallet needs at the start (`need`: of the token or of USDC).
 * `isUsdc` tells whether a reference names USDC. A kind other than BACKTEST_KINDS, or a swap
 * with no USDC side, is `backtest_unsupported`.
 *
 * @example
 * backtestPlan(body.automation, isUsdc, 3600 * 24) // { plan: { kind: 'dca', side: 'buy', ... }, token: 'TSLAx', need: { usdc: 100 } }
 */
export function backtestPlan(a: BacktestBody['automation'], isUsdc: (ref: string) => boolean, rangeSeconds: number): { plan: BacktestPlan; token: string; need: { token: number; usdc: number } } {
  if (!a.kind || !(BACKTEST_KINDS as readonly string[]).includes(a.kind)) throw new BacktestUnsupportedError({ 'automation.kind': `One of ${BACKTEST_KINDS.join(', ')}.` })
  const kind = a.kind as (typeof BACKTEST_KINDS)[number]
  const params = a[kind]
  if (!params) throw new ValidationError({ [`automation.${kind}`]: `Required with kind ${kind}.` })
  const pair = (p: Pair, field: string): { side: Side; token: string } => {
    if (isUsdc(p.tokenIn) && !isUsdc(p.tokenOut)) return { side: 'buy', token: p.tokenOut }
    if (isUsdc(p.tokenOut) && !isUsdc(p.tokenIn)) return { side: 'sell', token: p.tokenIn }
    throw new BacktestUnsupportedError({ [`automation.${field}.tokenIn`]: 'A backtest replays swaps between a token and USDC: one side must be USDC.' })
  }
  const need = (side: Side, n: number) => (side === 'buy' ? { token: 0, usdc: n } : { token: n, usdc: 0 })
  if (kind === 'dca') {
    const p = a.dca!
    const { side, token } = pair(p, 'dca')
    // The ticks in [from, to): the first at `from`.
    const runs = Math.min(p.maxRuns ?? Infinity, Math.ceil(rangeSeconds / p.everySeconds))
    return { plan: { kind, side, amountPerRun: Number(p.amountPerRun), everySeconds: p.everySeconds, maxRuns: p.maxRuns ?? null }, token, need: need(side, Number(p.amountPerRun) * runs) }
  }
  if (kind === 'twap') {
    const p = a.twap!
    const { side, token } = pair(p, 'twap')
    const plan = { kind, side, amountIn: Number(p.amountIn), slices: p.slices, everySeconds: twapEverySeconds(p.overSeconds, p.slices), maxPriceImpactBps: p.maxPriceImpactBps }
    return { plan, token, need: need(side, Number(p.amountIn)) }
  }
  if (kind === 'limit') {
    const p = a.limit!
    const { side, token } = pair(p, 'limit')
    if (p.mint && p.mint.toLowerCase() !== token.toLowerCase()) throw new BacktestUnsupportedError({ 'automation.limit.mint': `A backtest's limit watches the price of ${token}, the side that is not USDC.` })
    return { plan: { kind, side, amountIn: Number(p.amountIn), operator: p.operator, priceUsd: Number(p.priceUsd) }, token, need: need(side, Number(p.amountIn)) }
  }
  const p = a[kind]!
  if (p.quoteOut && !isUsdc(p.quoteOut)) throw new BacktestUnsupportedError({ [`automation.${kind}.quoteOut`]: 'A backtest sells into USDC.' })
  if (isUsdc(p.token)) throw new BacktestUnsupportedError({ [`automation.${kind}.token`]: 'USDC has no candles of its own.' })
  const share = p.share ?? 1
  const one = { token: 1, usdc: 0 }
  if (kind === 'stop_loss' || kind === 'take_profit') return { plan: { kind, priceUsd: Number(a[kind]!.priceUsd), share }, token: p.token, need: one }
  if (kind === 'trailing_stop') {
    const t = a.trailing_stop!
    if ((t.trailPct === undefined) === (t.trailUsd === undefined)) throw new ValidationError({ 'automation.trailing_stop.trailPct': 'Give one of trailPct or trailUsd.' })
    return { plan: { kind, trailPct: t.trailPct, trailUsd: t.trailUsd, share }, token: p.token, need: one }
  }
  const b = a.bracket!
  if (Number(b.takeProfitUsd) <= Number(b.stopLossUsd)) throw new ValidationError({ 'automation.bracket.takeProfitUsd': 'Must be above stopLossUsd.' })
  return { plan: { kind: 'bracket', takeProfitUsd: b.takeProfitUsd, stopLossUsd: b.stopLossUsd, share }, token: p.token, need: one }
}

import { createHash } from 'node:crypto'
import { ValidationError } from '../errors.ts'
import type { IntelPorts } from '../intel/ports.ts'
import { isUsdc } from '../intel/intelTokens.ts'
import { candleSeries, resolveMint, usdNumber } from '../intel/intelFigures.ts'
import { INTERVALS, MAX_CANDLES, bucketStart, type Interval } from '../intel/candleRules.ts'
import { backtestPlan, BacktestRangeError, MAX_BACKTEST_DAYS, type BacktestBody } from './backtestPlan.ts'
import { round, simulate } from './simulate.ts'

/** The pools' fee a backtest takes off every swap's amount in. */
export const BACKTEST_FEE_BPS = 30

/** The smallest interval whose candles over `seconds` fit in MAX_CANDLES. */
const intervalFor = (seconds: number): Interval => (Object.keys(INTERVALS) as Interval[]).find((k) => seconds / INTERVALS[k] < MAX_CANDLES) ?? '1d'

/**
 * A backtest of an automation over the indexed candles of its token (the same candles as
 * `GET /tokens/:address/candles`): the automation's kind replayed as a plan (backtestPlan.ts)
 * by the pure `simulate`, every decision and fill at a candle's close. Nothing is stored; the
 * answer's id is a digest of the inputs and of the candles replayed, so the same inputs over
 * the same index give the same answer.
 *
 * @example
 * const r = await runBacktest(ports, { automation: { name: 'x', kind: 'stop_loss', stop_loss: { token: 'TSLAx', priceUsd: '90' } }, from, to })
 */
export async function runBacktest(deps: Pick<IntelPorts, 'prices' | 'intel'>, body: BacktestBody) {
  const from = new Date(body.from)
  const to = new Date(body.to)
  if (from.getTime() >= to.getTime()) throw new ValidationError({ from: 'Must be before to.' })
  const seconds = (to.getTime() - from.getTime()) / 1000
  if (seconds > MAX_BACKTEST_DAYS * 86_400) throw new BacktestRangeError(`At most ${MAX_BACKTEST_DAYS} days.`)
  const interval = body.interval ?? intervalFor(seconds)
  const step = INTERVALS[interval]
  if ((bucketStart((to.getTime() - 1) / 1000, step) - bucketStart(from.getTime() / 1000, step)) / step + 1 > MAX_CANDLES) {
    throw new BacktestRangeError(`At most ${MAX_CANDLES} candles of ${interval}: a longer interval, or a shorter range.`)
  }
  const d = deps.prices.deployment
  const { plan, token: ref, need } = backtestPlan(body.automation, (r) => isUsdc(d, r), seconds)
  const token = await resolveMint(deps, ref, 'automation')
  if (body.token && (await resolveMint(deps, body.token, 'token')).address !== token.address) throw new ValidationError({ token: `The automation trades ${ref}: its candles are replayed.` })
  const series = await candleSeries(deps, token, { interval, from, to })
  const candles = series.candles.filter((c) => c.closeUsd !== null).map((c) => ({ t: c.t, closeUsd: usdNumber(c.closeUsd!) }))
  const start = { token: body.holdings?.token !== undefined ? Number(body.holdings.token) : need.token, usdc: body.holdings?.usdc !== undefined ? Number(body.holdings.usdc) : need.usdc }
  const liquidityUsd = body.liquidityUsd ? Number(body.liquidityUsd) : null
  const r = simulate(plan, candles, { start, feeBps: BACKTEST_FEE_BPS, liquidityUsd, interval: step })
  const id = `bt_${createHash('sha256').update(JSON.stringify({ body, interval, candles })).digest('hex').slice(0, 24)}`
  return {
    id,
    token: { address: token.address, symbol: token.symbol },
    from: series.from.toISOString(), to: to.toISOString(), interval, candles: candles.length,
    start: { holdings: { [token.symbol]: round(start.token), USDC: round(start.usdc) }, valueUsd: r.startValueUsd },
    fills: r.fills,
    skipped: r.skipped,
    final: { holdings: { [token.symbol]: r.final.token, USDC: r.final.usdc }, valueUsd: r.final.valueUsd },
    pnlUsd: r.pnlUsd,
    maxDrawdownPct: r.maxDrawdownPct,
    buyAndHold: r.buyAndHold,
    assumptions: {
      prices: "each candle's close in USD (the token's indexed trades; a candle without trades is flat at the previous close; candles without a USD price are left out)",
      decisions: "triggers see each candle's close, as the trigger feed sees each block's price: a move that comes back within a candle is not seen; timers (dca, twap) run on a grid from the first candle and fire at the close of the candle their tick falls in",
      fills: "every swap fills at the close of the candle that triggered it, in full, at once; one the holdings cannot pay is skipped (listed in skipped)",
      feeBps: BACKTEST_FEE_BPS,
      priceImpact: liquidityUsd === null
        ? 'none: the index keeps no history of pool liquidity; give liquidityUsd for a constant-product estimate'
        : `constant product against a pool of ${liquidityUsd} USD of USDC and the same value of the token at each close`,
      start: 'holdings at the first candle: given, or what the automation needs (a protective order: 1 token; a buy: its USDC; a sell: its tokens)',
      gas: 'not counted',
    },
  }
}

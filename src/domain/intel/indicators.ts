import { EMA, MACD, RSI, SMA } from 'trading-signals'

/**
 * Technical indicators over a series of closes, computed by `trading-signals` (maintained, ESM,
 * typed, no dependencies; see docs/api.md "Indicators" for why not `technicalindicators`).
 * The service does no indicator math of its own: it feeds the library the candle closes in
 * order and reads its last result.
 *
 * - `rsi` (period 14): `overbought` at or above 70, `oversold` at or below 30, else `neutral`.
 * - `ema`, `sma` (period 20).
 * - `macd` (EMA 12, EMA 26, signal EMA 9): `bullish` when the histogram is above zero, else `bearish`.
 */

export const INDICATOR_NAMES = ['rsi', 'ema', 'sma', 'macd'] as const
export type IndicatorName = (typeof INDICATOR_NAMES)[number]
export const DEFAULT_PERIODS = { rsi: 14, ema: 20, sma: 20 } as const
export const MACD_PERIODS = { fast: 12, slow: 26, signal: 9 } as const
export const RSI_OVERBOUGHT = 70
export const RSI_OVERSOLD = 30

export type IndicatorValue =
  | { indicator: 'rsi'; value: number; signal: 'overbought' | 'oversold' | 'neutral'; period: number }
  | { indicator: 'ema' | 'sma'; value: number; period: number }
  | { indicator: 'macd'; macd: number; signal: number; histogram: number; trend: 'bullish' | 'bearish' }

/** Closes an indicator needs before it has a value. */
export function requiredCandles(name: IndicatorName, period?: number): number {
  if (name === 'macd') return MACD_PERIODS.slow + MACD_PERIODS.signal - 1
  const p = period ?? DEFAULT_PERIODS[name]
  return name === 'rsi' ? p + 1 : p
}

const round = (n: number) => Number(n.toPrecision(12))

/**
 * The indicator's value at the last close, or null when the series is too short.
 *
 * @example
 * computeIndicator('sma', [1, 2, 3], 3) // { indicator: 'sma', value: 2, period: 3 }
 */
export function computeIndicator(name: IndicatorName, closes: readonly number[], period?: number): IndicatorValue | null {
  if (closes.length < requiredCandles(name, period)) return null
  if (name === 'macd') {
    const m = new MACD(new EMA(MACD_PERIODS.fast), new EMA(MACD_PERIODS.slow), new EMA(MACD_PERIODS.signal))
    m.updates([...closes], false)
    const r = m.getResult()
    if (!r) return null
    return { indicator: 'macd', macd: round(r.macd), signal: round(r.signal), histogram: round(r.histogram), trend: r.histogram > 0 ? 'bullish' : 'bearish' }
  }
  const p = period ?? DEFAULT_PERIODS[name]
  const ind = name === 'rsi' ? new RSI(p) : name === 'ema' ? new EMA(p) : new SMA(p)
  ind.updates([...closes], false)
  const value = ind.getResult()
  if (value === null || !Number.isFinite(value)) return null
  if (name === 'rsi') {
    const signal = value >= RSI_OVERBOUGHT ? 'overbought' : value <= RSI_OVERSOLD ? 'oversold' : 'neutral'
    return { indicator: 'rsi', value: round(value), signal, period: p }
  }
  return { indicator: name, value: round(value), period: p }
}

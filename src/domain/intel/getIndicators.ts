import { ValidationError } from '../errors.ts'
import type { IntelPorts } from './ports.ts'
import type { IndicatorsInput } from './intel.schema.ts'
import { candleSeries, quoteNumber, resolveMint, usdNumber } from './intelFigures.ts'
import { computeIndicator, INDICATOR_NAMES, requiredCandles, type IndicatorValue } from './indicators.ts'

export type GetIndicatorsDeps = Pick<IntelPorts, 'prices' | 'intel'>

/** Candles the indicators are computed over (the recursive ones, EMA and RSI, settle with history). */
export const INDICATOR_CANDLES = 500

/**
 * RSI, EMA, SMA and MACD of a token's candle closes (USD when every close has a USD price, else
 * the quote asset: `basis`), computed by the indicator library (indicators.ts). Too few candles
 * for one of them is a 422 on `indicators` saying how many it needs.
 *
 * @example
 * const r = await getIndicators(deps, { mint: 'CAT', indicators: ['rsi'], timeframe: '1h', period: undefined })
 * r.indicators[0] // { indicator: 'rsi', value: 61.2, signal: 'neutral', period: 14 }
 */
export async function getIndicators(deps: GetIndicatorsDeps, input: IndicatorsInput) {
  const t = await resolveMint(deps, input.mint, 'mint')
  const s = await candleSeries(deps, t, { interval: input.timeframe, count: INDICATOR_CANDLES })
  const usd = s.candles.length > 0 && s.candles.every((c) => c.closeUsd !== null)
  const closes = s.candles.map((c) => (usd ? usdNumber(c.closeUsd!) : quoteNumber(c.close, s.quoteDecimals)))
  const names = input.indicators ?? [...INDICATOR_NAMES]
  const short = names.filter((name) => closes.length < requiredCandles(name, input.period))
  if (short.length) {
    const need = Math.max(...short.map((n) => requiredCandles(n, input.period)))
    throw new ValidationError({
      indicators: `${short.join(', ')} need${short.length === 1 ? 's' : ''} at least ${need} candles of ${input.timeframe}; ${t.symbol} has ${closes.length}.`,
    })
  }
  const indicators = names.map((name) => computeIndicator(name, closes, input.period)).filter((v): v is IndicatorValue => v !== null)
  return { mint: input.mint, address: t.address, symbol: t.symbol, timeframe: input.timeframe, basis: usd ? 'usd' : 'quote', candles: closes.length, indicators }
}

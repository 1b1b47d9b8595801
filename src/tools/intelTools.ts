import { z } from 'zod'
import { ValidationError } from '../domain/errors.ts'
import { fieldErrorsOf } from '../domain/fieldErrors.ts'
import { INTERVAL_NAMES } from '../domain/intel/candleRules.ts'
import { INDICATOR_NAMES } from '../domain/intel/indicators.ts'
import { ANOMALY_TYPES } from '../domain/intel/anomalyRules.ts'
import { anomaliesQuery, candlesQuery, indicatorsQuery, macroQuery, MACRO_CATEGORIES, topMoversQuery, yieldQuery } from '../domain/intel/intel.schema.ts'
import { defineTool } from './tool.ts'

/**
 * Market intelligence for a model: the same use cases as GET /signals/*, /indicators and
 * /tokens/:address/candles, with arguments as JSON (numbers and arrays) that are handed to the
 * routes' query schemas, so both front doors validate alike.
 */

/** Parses tool arguments with a route's query schema (strings, comma lists); 422 naming the field. */
function asQuery<T extends z.ZodType>(schema: T, args: Record<string, unknown>): z.output<T> {
  const query = Object.fromEntries(
    Object.entries(args).filter(([, v]) => v !== undefined).map(([k, v]) => [k, Array.isArray(v) ? v.join(',') : String(v)]),
  )
  const parsed = schema.safeParse(query)
  if (!parsed.success) throw new ValidationError(fieldErrorsOf(parsed.error))
  return parsed.data
}

const mint = z.string().min(1).max(64).describe('A token with a pool: its 0x address, or a symbol: ETH or WETH, a stock (TSLAx, NVDAx, AAPLx), or a verified launched token (any case).')
const interval = z.enum(INTERVAL_NAMES).describe('Candle length.')

export const getMarketSignalsTool = defineTool({
  name: 'get_market_signals',
  description:
    'Read market signals computed from every swap, launch and pool on the chain: `top_movers` (tokens (launched, stocks, WETH) that rose or fell ' +
    'most, or traded most, over 1h/4h/24h, with USD price, change as a decimal, volume, market cap, liquidity), `anomalies` ' +
    '(whale swaps, liquidity moves, volume spikes, large transfers, with a 0-1 severity), `yield` (AMM pools with APY in percent ' +
    'from fees over TVL, and a risk) or `macro` (stablecoin flow, ETH share of volume, breadth, volatility, a 0-100 fear/greed index).',
  args: z.strictObject({
    signal: z.enum(['top_movers', 'anomalies', 'yield', 'macro']).describe('Which signal to read.'),
    timeframe: z.string().max(8).optional().describe('top_movers: 1h, 4h or 24h (default); anomalies: 1h, 4h, 24h (default) or 7d.'),
    limit: z.number().int().min(1).max(100).optional().describe('At most this many entries (top_movers 10, anomalies and yield 20 by default).'),
    sort_by: z.enum(['gainers', 'losers', 'volume']).optional().describe('top_movers: the order (default gainers).'),
    min_liquidity: z.number().min(0).optional().describe('top_movers: minimum liquidity in USD.'),
    types: z.array(z.enum(ANOMALY_TYPES)).max(4).optional().describe('anomalies: only these types.'),
    min_apy: z.number().min(0).optional().describe('yield: minimum APY in percent.'),
    include: z.array(z.enum(MACRO_CATEGORIES)).max(5).optional().describe('macro: only these categories.'),
  }),
  scope: 'read',
  movesFunds: false,
  run: ({ core }, { signal, timeframe, limit, sort_by, min_liquidity, types, min_apy, include }) => {
    if (signal === 'top_movers') return core.getTopMovers(asQuery(topMoversQuery, { timeframe, limit, sort_by, min_liquidity }))
    if (signal === 'anomalies') return core.listAnomalies(asQuery(anomaliesQuery, { timeframe, limit, types }))
    if (signal === 'yield') return core.getYieldOpportunities(asQuery(yieldQuery, { limit, min_apy }))
    return core.getMacroSignals(asQuery(macroQuery, { include }))
  },
})

export const getIndicatorsTool = defineTool({
  name: 'get_indicators',
  description:
    'Read technical indicators of a token with a pool (launched, a stock, WETH) from its candle closes: RSI (with overbought/oversold/neutral), EMA, SMA ' +
    '(period 14 for RSI and 20 for the averages unless `period` is given) and MACD 12/26/9 (with bullish/bearish). Fails when ' +
    'the token has too few candles of the timeframe; try a shorter timeframe then.',
  args: z.strictObject({
    mint,
    indicators: z.array(z.enum(INDICATOR_NAMES)).min(1).max(4).optional().describe('Which indicators (default all four).'),
    timeframe: interval.optional().describe('Candle length (default 1h).'),
    period: z.number().int().min(2).max(200).optional().describe('Period of RSI, EMA and SMA.'),
  }),
  scope: 'read',
  movesFunds: false,
  run: ({ core }, args) => core.getIndicators(asQuery(indicatorsQuery, args)),
})

/** Candles a tool answer holds at most (the newest), to keep a model's context small. */
const MAX_TOOL_CANDLES = 200

export const getCandlesTool = defineTool({
  name: 'get_candles',
  description:
    'Read OHLCV candles of a token with a pool (launched, a stock, WETH) from its indexed swaps, newest last: open, high, low, close in its quote asset and in ' +
    'USD, volume in tokens, quote and USD, and the trade count. Minutes without trades repeat the previous close with no volume.',
  args: z.strictObject({
    address: mint,
    interval: interval.optional().describe('Candle length (default 1h).'),
    limit: z.number().int().min(1).max(MAX_TOOL_CANDLES).default(50).describe(`The newest candles to return, 1-${MAX_TOOL_CANDLES}.`),
  }),
  scope: 'read',
  movesFunds: false,
  run: async ({ core }, { address, interval: i, limit }) => {
    const res = await core.getCandles({ ...asQuery(candlesQuery, { interval: i }), address })
    return { ...res, candles: res.candles.slice(-limit) }
  },
})

export const INTEL_TOOLS = [getMarketSignalsTool, getIndicatorsTool, getCandlesTool] as const

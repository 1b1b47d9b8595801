import { z } from 'zod'
import { splitList } from '../tokens/tokens.schema.ts'
import { INTERVAL_NAMES } from './candleRules.ts'
import { INDICATOR_NAMES, type IndicatorName } from './indicators.ts'
import { ANOMALY_TYPES, type AnomalyType } from './anomalyRules.ts'

/**
 * Queries of the market-intelligence routes, as the reference client sends them (snake_case on
 * /signals and /indicators). Lenient on nothing: an unknown parameter is a 422 naming it.
 */

const intString = (min: number, max: number) => {
  const msg = `An integer from ${min} to ${max}.`
  return z.string().regex(/^[0-9]{1,7}$/, msg).transform(Number).pipe(z.number().int().min(min, msg).max(max, msg))
}
const limitParam = (max: number, fallback: number) => intString(1, max).default(fallback)
const decimalParam = z.string().regex(/^[0-9]{1,15}(\.[0-9]{1,18})?$/, 'A non-negative decimal number.').transform(Number)

/** A time: ISO 8601, or Unix seconds. */
export const timeParam = z
  .string()
  .max(40)
  .transform((v, ctx) => {
    const d = /^[0-9]{1,12}$/.test(v) ? new Date(Number(v) * 1000) : new Date(v)
    if (Number.isNaN(d.getTime())) ctx.addIssue({ code: 'custom', message: 'An ISO 8601 time or Unix seconds.' })
    return d
  })

export const intervalParam = z.enum(INTERVAL_NAMES, `One of ${INTERVAL_NAMES.join(', ')}.`)

export const candlesQuery = z.strictObject({
  interval: intervalParam.default('1h'),
  from: timeParam.optional(),
  to: timeParam.optional(),
})

/** A comma list whose every entry is one of `allowed`; 422 naming the parameter otherwise. */
const listOf = <T extends string>(allowed: readonly T[], fallback: readonly T[] | undefined) =>
  z
    .string()
    .max(500)
    .optional()
    .transform((v, ctx) => {
      const items = splitList(v).map((s) => s.toLowerCase())
      const bad = items.filter((s) => !allowed.includes(s as T))
      if (bad.length) ctx.addIssue({ code: 'custom', message: `Unknown: ${bad.join(', ')}. Use ${allowed.join(', ')}.` })
      return items.length ? (items as T[]) : fallback ? [...fallback] : undefined
    })

export const indicatorsQuery = z.strictObject({
  mint: z.string().trim().min(1, 'A token address, or a symbol: ETH, WETH, a stock (TSLAx) or a verified token.').max(64),
  indicators: listOf<IndicatorName>(INDICATOR_NAMES, INDICATOR_NAMES),
  timeframe: intervalParam.default('1h'),
  period: intString(2, 200).optional(),
})

export const moversTimeframes = { '1h': 3600, '4h': 14_400, '24h': 86_400 } as const
export const topMoversQuery = z.strictObject({
  timeframe: z.enum(['1h', '4h', '24h'], 'One of 1h, 4h, 24h.').default('24h'),
  limit: limitParam(100, 10),
  sort_by: z.enum(['gainers', 'losers', 'volume'], 'One of gainers, losers, volume.').default('gainers'),
  min_liquidity: decimalParam.optional(),
})

export const anomaliesQuery = z.strictObject({
  timeframe: z.enum(['1h', '4h', '24h', '7d'], 'One of 1h, 4h, 24h, 7d.').default('24h'),
  types: listOf<AnomalyType>(ANOMALY_TYPES, undefined),
  limit: limitParam(100, 20),
})

export const yieldQuery = z.strictObject({
  protocol: z.string().trim().max(64).optional(),
  min_apy: decimalParam.optional(),
  limit: limitParam(100, 20),
})

export const MACRO_CATEGORIES = ['stablecoins', 'dominance', 'sentiment', 'breadth', 'volatility'] as const
export const macroQuery = z.strictObject({
  include: listOf(MACRO_CATEGORIES, MACRO_CATEGORIES),
})

export type CandlesInput = z.infer<typeof candlesQuery> & { address: string | undefined }
export type IndicatorsInput = z.infer<typeof indicatorsQuery>
export type TopMoversInput = z.infer<typeof topMoversQuery>
export type AnomaliesInput = z.infer<typeof anomaliesQuery>
export type YieldInput = z.infer<typeof yieldQuery>
export type MacroInput = z.infer<typeof macroQuery>

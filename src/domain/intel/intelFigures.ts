import { formatUnits } from 'viem'
import { ValidationError, NotFoundError } from '../errors.ts'
import type { IntelPorts } from './ports.ts'
import { findReferenceAsset, isUsdc, type IntelToken } from './intelTokens.ts'
import { bucketStart, DEFAULT_CANDLES, fillGaps, INTERVALS, MAX_CANDLES, type Bucket, type Interval } from './candleRules.ts'

/** Shared by the market-intelligence use cases: token lookup, candle series, number views. */

/** A quote price (PRICE_SCALE, quote base units) as a number of quote units per whole token. */
export const quoteNumber = (price: bigint, quoteDecimals: number) => Number(formatUnits(price, 18 + quoteDecimals))
/** usd18 as a number of dollars. */
export const usdNumber = (usd18: bigint) => Number(formatUnits(usd18, 18))
export const amountNumber = (amount: bigint, decimals: number) => Number(formatUnits(amount, decimals))

export function quoteDecimalsOf(deps: Pick<IntelPorts, 'prices'>, quoteSymbol: string): number {
  return deps.prices.deployment?.quoteAssets[quoteSymbol]?.decimals ?? 18
}

/**
 * A token with a pool the index follows (intelTokens.ts): a reference asset (WETH by `ETH`,
 * `WETH` or its address, a stock by symbol or address, any case), or a launched token by
 * address or verified symbol. Unknown is a 404, or with `field` a 422 naming that field.
 */
export async function resolveMint(deps: Pick<IntelPorts, 'prices' | 'intel'>, mint: string | undefined, field?: string): Promise<IntelToken> {
  const d = deps.prices.deployment
  const ref = mint ? findReferenceAsset(d, mint) : undefined
  if (ref) return ref
  const t = mint && !isUsdc(d, mint) ? await deps.intel.findToken(d?.chainId, mint) : undefined
  if (t) return { address: t.address, symbol: t.symbol, name: t.name, quoteSymbol: t.quote_symbol, verified: t.verified }
  if (!field) throw new NotFoundError('Token')
  throw new ValidationError({
    [field]: mint && isUsdc(d, mint)
      ? 'USDC is the quote asset of the pools (pegged at $1): it has no candles of its own.'
      : 'Not a token with a known pool: ETH or WETH, a stock symbol (TSLAx), a verified token\'s symbol, or a token address.',
  })
}

/**
 * A token's candles over [from, to) with gaps filled (src/domain/intel/candleRules.ts); `to`
 * defaults to now (or the token's last trade when the chain's clock runs ahead), `from` to
 * DEFAULT_CANDLES intervals before it; more than MAX_CANDLES is a 422 on `from`.
 *
 * @example
 * const { candles, quoteDecimals } = await candleSeries(deps, token, { interval: '15m', count: 500 })
 */
export async function candleSeries(deps: Pick<IntelPorts, 'prices' | 'intel'>, t: IntelToken, q: { interval: Interval; from?: Date | undefined; to?: Date | undefined; count?: number }) {
  const interval = INTERVALS[q.interval]
  let to = q.to
  if (!to) {
    const last = await deps.intel.lastTradeAt(t.address)
    to = new Date(Math.max(Date.now(), (last?.getTime() ?? 0) + 1000))
  }
  const from = q.from ?? new Date(to.getTime() - (q.count ?? DEFAULT_CANDLES) * interval * 1000)
  if (from.getTime() >= to.getTime()) throw new ValidationError({ from: 'Must be before to.' })
  const fromT = bucketStart(from.getTime() / 1000, interval)
  const toT = bucketStart((to.getTime() - 1) / 1000, interval)
  if ((toT - fromT) / interval + 1 > MAX_CANDLES) throw new ValidationError({ from: `At most ${MAX_CANDLES} candles of ${q.interval} per request.` })
  const quoteDecimals = quoteDecimalsOf(deps, t.quoteSymbol)
  const { buckets, prev } = await deps.intel.candles({ token: t.address, interval, from: new Date(fromT * 1000), to, quoteDecimals })
  return { from: new Date(fromT * 1000), to, quoteDecimals, candles: fillGaps(buckets, prev, fromT, toT, interval) }
}

/**
 * A candle as the API shows it: numbers, prices in the quote asset and in USD (null: no USD price).
 *
 * @example
 * candleView(bucket, 6) // { time, timestamp, open: 0.0000153, ..., closeUsd: 0.0000153, volumeUsd: 10, trades: 1 }
 */
export function candleView(b: Bucket, quoteDecimals: number) {
  const usd = (v: bigint | null) => (v === null ? null : usdNumber(v))
  return {
    time: new Date(b.t * 1000).toISOString(),
    timestamp: b.t,
    open: quoteNumber(b.open, quoteDecimals), high: quoteNumber(b.high, quoteDecimals), low: quoteNumber(b.low, quoteDecimals), close: quoteNumber(b.close, quoteDecimals),
    openUsd: usd(b.openUsd), highUsd: usd(b.highUsd), lowUsd: usd(b.lowUsd), closeUsd: usd(b.closeUsd),
    volume: amountNumber(b.volumeToken, 18), volumeQuote: amountNumber(b.volumeQuote, quoteDecimals), volumeUsd: usd(b.volumeUsd),
    trades: b.trades,
  }
}

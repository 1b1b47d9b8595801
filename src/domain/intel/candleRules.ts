/**
 * Candles (OHLCV) from indexed trades. A trade's price is the pool's or curve's price right after
 * it (`trade.price_after`: quote base units per whole token x 1e18), its USD price that times the
 * quote asset's USD price at its block (`trade.quote_usd`). Buckets start at multiples of the
 * interval since the Unix epoch (UTC).
 *
 * Gaps: a bucket without trades after the token's first trade is filled flat at the previous
 * close (open = high = low = close, volume 0, trades 0); buckets before the token's first trade
 * are left out, so a series starts at its first real candle.
 */

export const INTERVALS = { '1m': 60, '5m': 300, '15m': 900, '1h': 3600, '4h': 14_400, '1d': 86_400 } as const
export type Interval = keyof typeof INTERVALS
export const INTERVAL_NAMES = Object.keys(INTERVALS) as Interval[]
/** The most candles one answer holds. */
export const MAX_CANDLES = 1000
/** Candles an answer holds when `from` is left out. */
export const DEFAULT_CANDLES = 200

/** One bucket's figures as the store aggregates them (null USD: the quote had no USD price). */
export type Bucket = {
  t: number
  open: bigint; high: bigint; low: bigint; close: bigint
  openUsd: bigint | null; highUsd: bigint | null; lowUsd: bigint | null; closeUsd: bigint | null
  volumeToken: bigint; volumeQuote: bigint; volumeUsd: bigint | null
  trades: number
}

/** The start of the bucket that holds `seconds`. */
export const bucketStart = (seconds: number, interval: number) => Math.floor(seconds / interval) * interval

/**
 * Buckets from `fromT` to `toT` (bucket starts, inclusive) with gaps filled at the previous
 * close; `prev` is the last trade's prices before `fromT` (null: none, so leading gaps are left out).
 *
 * @example
 * fillGaps([{ t: 0, ... }, { t: 120, ... }], null, 0, 120, 60) // t = 0, 60 (flat), 120
 */
export function fillGaps(rows: readonly Bucket[], prev: { close: bigint; closeUsd: bigint | null } | null, fromT: number, toT: number, interval: number): Bucket[] {
  const byT = new Map(rows.map((r) => [r.t, r]))
  const out: Bucket[] = []
  let last = prev
  for (let t = fromT; t <= toT; t += interval) {
    const b = byT.get(t)
    if (b) {
      out.push(b)
      last = { close: b.close, closeUsd: b.closeUsd }
    } else if (last) {
      const { close, closeUsd } = last
      out.push({ t, open: close, high: close, low: close, close, openUsd: closeUsd, highUsd: closeUsd, lowUsd: closeUsd, closeUsd, volumeToken: 0n, volumeQuote: 0n, volumeUsd: closeUsd === null ? null : 0n, trades: 0 })
    }
  }
  return out
}

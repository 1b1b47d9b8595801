import { describe, expect, it } from 'vitest'
import { bucketStart, fillGaps, type Bucket } from './candleRules.ts'

const b = (t: number, close: bigint, trades = 1): Bucket => ({
  t, open: close, high: close, low: close, close, openUsd: close * 2n, highUsd: close * 2n, lowUsd: close * 2n, closeUsd: close * 2n,
  volumeToken: 1n, volumeQuote: 1n, volumeUsd: 2n, trades,
})

describe('candle gaps', () => {
  it('fills an empty bucket flat at the previous close, with no volume', () => {
    const out = fillGaps([b(0, 10n), b(120, 12n)], null, 0, 180, 60)
    expect(out.map((c) => [c.t, c.close, c.trades])).toEqual([[0, 10n, 1], [60, 10n, 0], [120, 12n, 1], [180, 12n, 0]])
    expect(out[1]).toMatchObject({ open: 10n, high: 10n, low: 10n, volumeQuote: 0n, volumeUsd: 0n, closeUsd: 20n })
  })
  it('leaves out buckets before the first trade, unless a trade came before the range', () => {
    expect(fillGaps([b(120, 12n)], null, 0, 120, 60).map((c) => c.t)).toEqual([120])
    expect(fillGaps([b(120, 12n)], { close: 9n, closeUsd: null }, 0, 120, 60).map((c) => [c.t, c.close, c.closeUsd])).toEqual([[0, 9n, null], [60, 9n, null], [120, 12n, 24n]])
  })
  it('buckets start at multiples of the interval', () => {
    expect(bucketStart(3_599, 3_600)).toBe(0)
    expect(bucketStart(3_600, 3_600)).toBe(3_600)
  })
})

import { describe, expect, it } from 'vitest'
import { bracketSide, priceMatters, shareOfHolding, trailingStopLevel, twapSliceAmount } from './orderRules.ts'
import { usdText } from './orderView.ts'

describe('protective and sliced order rules', () => {
  it('a share of a holding is rounded down in base units; of ETH, of what is above the gas reserve', () => {
    expect(shareOfHolding({ balance: '10', decimals: 18, share: 0.5, native: false })).toBe('5')
    expect(shareOfHolding({ balance: '1', decimals: 6, share: 1 / 3, native: false })).toBe('0.333333')
    expect(shareOfHolding({ balance: '1.005', decimals: 18, share: 1, native: true })).toBe('1')
    expect(shareOfHolding({ balance: '0.001', decimals: 18, share: 1, native: true })).toBe('0')
  })

  it("a TWAP's slices add up to the total exactly, the last taking the rounding", () => {
    const parts = [1, 2, 3].map((slice) => twapSliceAmount({ total: '1', decimals: 6, slices: 3, slice }))
    expect(parts).toEqual(['0.333333', '0.333333', '0.333334'])
    expect(twapSliceAmount({ total: '1', decimals: 6, slices: 3, slice: 4 })).toBe('0')
  })

  it('levels: a trailing stop from its high, a bracket side with the stop-loss looked at first', () => {
    expect(trailingStopLevel({ type: 'trailing_stop', mint: 'X', trailPct: 10 }, '200')).toBe(180)
    expect(trailingStopLevel({ type: 'trailing_stop', mint: 'X', trailUsd: '15' }, '200')).toBe(185)
    const b = { type: 'bracket', mint: 'X', takeProfitUsd: '2', stopLossUsd: '1' } as const
    expect([bracketSide(b, '0.5'), bracketSide(b, '1.5'), bracketSide(b, '2')]).toEqual(['stop_loss', null, 'take_profit'])
    expect(bracketSide({ ...b, takeProfitUsd: '1' }, '1')).toBe('stop_loss')
    expect(priceMatters({ type: 'trailing_stop', mint: 'X', trailPct: 10 }, '200', '190')).toBe(false)
    expect(priceMatters({ type: 'trailing_stop', mint: 'X', trailPct: 10 }, '200', '201')).toBe(true)
    expect(priceMatters({ type: 'trailing_stop', mint: 'X', trailPct: 10 }, '200', '180')).toBe(true)
  })

  it('levels are shown as plain decimals without float noise or exponents', () => {
    expect(usdText(112.49999999999999)).toBe('112.5')
    expect(usdText(1.2345e-9)).toBe('0.0000000012345')
    expect(usdText(-1)).toBe('0')
  })
})

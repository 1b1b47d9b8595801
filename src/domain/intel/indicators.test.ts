import { describe, expect, it } from 'vitest'
import { computeIndicator, requiredCandles } from './indicators.ts'

const rising = Array.from({ length: 40 }, (_, i) => 100 + i)

describe('indicators', () => {
  it('sma and ema over their period', () => {
    expect(computeIndicator('sma', [1, 2, 3, 4], 3)).toEqual({ indicator: 'sma', value: 3, period: 3 })
    const ema = computeIndicator('ema', rising, 20)
    expect(ema?.indicator).toBe('ema')
    expect((ema as { value: number }).value).toBeGreaterThan(120)
  })
  it('rsi of a series that only rises is overbought; only falls, oversold', () => {
    expect(computeIndicator('rsi', rising)).toMatchObject({ indicator: 'rsi', signal: 'overbought', period: 14 })
    expect(computeIndicator('rsi', [...rising].reverse())).toMatchObject({ signal: 'oversold' })
  })
  it('macd of a rising series is bullish', () => {
    expect(computeIndicator('macd', rising)).toMatchObject({ indicator: 'macd', trend: 'bullish' })
  })
  it('too few closes: null, and how many are needed', () => {
    expect(computeIndicator('rsi', rising.slice(0, 14))).toBeNull()
    expect(requiredCandles('rsi')).toBe(15)
    expect(requiredCandles('macd')).toBe(34)
    expect(computeIndicator('macd', rising.slice(0, 33))).toBeNull()
  })
})

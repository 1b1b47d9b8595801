import { describe, expect, it } from 'vitest'
import { breadth, changeOf, fearGreed, indexSentiment, medianAbsChange, poolApyPercent, poolRisk } from './signalRules.ts'

describe('signal rules', () => {
  it('change is a decimal', () => {
    expect(changeOf(1125n, 1000n)).toBe(0.125)
    expect(changeOf(900n, 1000n)).toBe(-0.1)
    expect(changeOf(1n, null)).toBeNull()
    expect(changeOf(1n, 0n)).toBeNull()
  })
  it('apy: 24 h LP fees over TVL, annualised, in percent', () => {
    // $10,000 a day through a $100,000 pool: 30 $/day, 10,950 $/year, 10.95%.
    expect(poolApyPercent(10_000, 100_000)).toBe(10.95)
    expect(poolApyPercent(5, 0)).toBe(0)
  })
  it('risk by TVL and verification', () => {
    expect(poolRisk(5_000, true)).toBe('high')
    expect(poolRisk(50_000, true)).toBe('medium')
    expect(poolRisk(500_000, false)).toBe('medium')
    expect(poolRisk(500_000, true)).toBe('low')
  })
  it('fear/greed from breadth and volatility', () => {
    expect(breadth([0.1, 0.2, -0.05])).toBeCloseTo(2 / 3)
    expect(medianAbsChange([0.1, 0.2, -0.05])).toBe(0.1)
    expect(fearGreed([0.1, 0.2, -0.05])).toBe(72)
    expect(fearGreed([-0.6, -0.8])).toBe(0)
    expect(fearGreed([])).toBeNull()
    expect([indexSentiment(72), indexSentiment(50), indexSentiment(10)]).toEqual(['bullish', 'neutral', 'bearish'])
  })
})

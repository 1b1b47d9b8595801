import { describe, expect, it } from 'vitest'
import { CREDITS_PER_USD, creditsToUsd, modelCallCredits, worstCaseCredits } from './modelCallCredits.ts'

const mini = { inputCreditsPerMillion: 150, outputCreditsPerMillion: 600 }

describe('modelCallCredits', () => {
  it('is ceil((in x in_price + out x out_price) / 1e6)', () => {
    expect(modelCallCredits({ promptTokens: 1_000_000, completionTokens: 0 }, mini)).toBe(150)
    expect(modelCallCredits({ promptTokens: 0, completionTokens: 1_000_000 }, mini)).toBe(600)
    expect(modelCallCredits({ promptTokens: 1_000_000, completionTokens: 1_000_000 }, mini)).toBe(750)
    // 12 x 150 + 3 x 600 = 3600 micro-credits: rounds up to 1.
    expect(modelCallCredits({ promptTokens: 12, completionTokens: 3 }, mini)).toBe(1)
    // exactly 2 credits stays 2; one more micro-credit makes it 3.
    expect(modelCallCredits({ promptTokens: 2_000_000, completionTokens: 0 }, { inputCreditsPerMillion: 1, outputCreditsPerMillion: 1 })).toBe(2)
    expect(modelCallCredits({ promptTokens: 2_000_001, completionTokens: 0 }, { inputCreditsPerMillion: 1, outputCreditsPerMillion: 1 })).toBe(3)
  })

  it('costs nothing for no tokens or free models', () => {
    expect(modelCallCredits({ promptTokens: 0, completionTokens: 0 }, mini)).toBe(0)
    expect(modelCallCredits({ promptTokens: 5000, completionTokens: 5000 }, { inputCreditsPerMillion: 0, outputCreditsPerMillion: 0 })).toBe(0)
  })

  it('stays exact beyond 2^53 micro-credits', () => {
    // 9e12 x 15000 = 1.35e17 micro-credits, past Number's exact range.
    expect(modelCallCredits({ promptTokens: 9_000_000_000_000, completionTokens: 1 }, { inputCreditsPerMillion: 15000, outputCreditsPerMillion: 1 })).toBe(135_000_000_001)
  })

  it('refuses negative or fractional inputs', () => {
    expect(() => modelCallCredits({ promptTokens: -1, completionTokens: 0 }, mini)).toThrow(RangeError)
    expect(() => modelCallCredits({ promptTokens: 1.5, completionTokens: 0 }, mini)).toThrow(RangeError)
  })

  it('worst case prices maxTokens as output; 1 credit is 0.001 USD', () => {
    expect(worstCaseCredits({ promptTokens: 1_000_000, maxTokens: 1_000_000 }, mini)).toBe(750)
    expect(CREDITS_PER_USD).toBe(1000)
    expect(creditsToUsd(150)).toBe(0.15)
  })
})

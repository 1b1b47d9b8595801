import { describe, expect, it } from 'vitest'
import { marketFee } from './marketFee.ts'

describe('marketFee', () => {
  it('takes 5 % rounded down, never more than the price', () => {
    expect(marketFee(1000)).toBe(50)
    expect(marketFee(1999)).toBe(99)
    expect(marketFee(19)).toBe(0)
    for (const p of [1, 7, 20, 12345, 10_000_000]) expect(marketFee(p)).toBeLessThanOrEqual(p)
  })
})

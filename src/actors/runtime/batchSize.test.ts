import { describe, expect, it } from 'vitest'
import { adaptiveBatch } from './batchSize.ts'

/** A seeded generator (mulberry32): the same backlog sequence on every run. */
function random(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

describe('adaptive batch size', () => {
  it('stays within its bounds, grows only after a full claim and shrinks only after a claim under a quarter, over random backlogs', () => {
    for (let seed = 1; seed <= 50; seed++) {
      const r = random(seed)
      const b = adaptiveBatch({ min: 10, max: 640 })
      for (let step = 0; step < 200; step++) {
        const before = b.size
        const backlog = Math.floor(r() * (r() < 0.5 ? 20 : 2000))
        const found = Math.min(backlog, before)
        const full = b.took(found)
        expect(b.size).toBeGreaterThanOrEqual(10)
        expect(b.size).toBeLessThanOrEqual(640)
        expect(full).toBe(found === before)
        if (b.size > before) expect(full).toBe(true)
        if (b.size < before) expect(found).toBeLessThan(before / 4)
      }
    }
  })

  it('reaches its largest size in a few polls under a standing backlog, and its smallest once it drains', () => {
    const b = adaptiveBatch({ min: 50, max: 1000 })
    const sizes: number[] = []
    for (let i = 0; i < 6; i++) {
      b.took(b.size)
      sizes.push(b.size)
    }
    expect(sizes).toEqual([100, 200, 400, 800, 1000, 1000])
    for (let i = 0; i < 6; i++) b.took(1)
    expect(b.size).toBe(50)
  })
})

import { describe, expect, it } from 'vitest'
import { createRefreshingMemo } from './refreshingMemo.ts'

describe('refreshing memo', () => {
  it('answers a stale value at once and refreshes it once in the background', async () => {
    let t = 0
    let calls = 0
    let release: (v: number) => void = () => {}
    const memo = createRefreshingMemo(10, 100, () => t)
    const fn = () => {
      calls++
      return calls === 1 ? Promise.resolve(1) : new Promise<number>((r) => (release = r))
    }
    expect(await memo.cached('k', fn)).toBe(1)
    t = 5
    expect(await memo.cached('k', fn)).toBe(1)
    expect(calls).toBe(1)
    t = 20
    expect(await memo.cached('k', fn)).toBe(1)
    expect(await memo.cached('k', fn)).toBe(1)
    expect(calls).toBe(2)
    release(2)
    await new Promise((r) => setImmediate(r))
    expect(await memo.cached('k', fn)).toBe(2)
  })
  it('past the staleness limit the caller waits for a fresh answer; a failed first answer is not kept', async () => {
    let t = 0
    const memo = createRefreshingMemo(10, 100, () => t)
    expect(await memo.cached('k', async () => 1)).toBe(1)
    t = 200
    expect(await memo.cached('k', async () => 2)).toBe(2)
    await expect(memo.cached('x', async () => { throw new Error('down') })).rejects.toThrow('down')
    expect(await memo.cached('x', async () => 3)).toBe(3)
  })
})

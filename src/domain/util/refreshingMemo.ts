import type { Memo } from '../market/ports.ts'

/**
 * A memo that never makes a caller wait for a refresh it can avoid: an answer younger than
 * `ttlMs` is shared as is; one older, but younger than `maxStaleMs`, is still answered at once
 * while one refresh runs in the background and replaces it; past `maxStaleMs` (or the first
 * time) the caller waits for a fresh answer. A failed refresh keeps the old answer; a failed
 * first answer is dropped so the next caller tries again.
 *
 * @example
 * const memo = createRefreshingMemo(2000, 60_000)
 * const board = await memo.cached('movers:24h', () => readBoard())
 */
export function createRefreshingMemo(ttlMs: number, maxStaleMs: number, now: () => number = Date.now): Memo {
  const cache = new Map<string, { at: number; value: Promise<unknown>; refreshing: boolean }>()
  const load = <T>(key: string, fn: () => Promise<T>) => {
    const value = fn()
    const entry = { at: now(), value: value as Promise<unknown>, refreshing: false }
    cache.set(key, entry)
    value.catch(() => cache.get(key) === entry && cache.delete(key))
    return value
  }
  return {
    cached<T>(key: string, fn: () => Promise<T>): Promise<T> {
      const hit = cache.get(key)
      const age = hit ? now() - hit.at : Infinity
      if (!hit || age >= maxStaleMs) return load(key, fn)
      if (age >= ttlMs && !hit.refreshing) {
        hit.refreshing = true
        fn().then(
          (v) => cache.get(key) === hit && cache.set(key, { at: now(), value: Promise.resolve(v), refreshing: false }),
          () => { hit.refreshing = false },
        )
      }
      return hit.value as Promise<T>
    },
  }
}

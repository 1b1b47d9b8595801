import type { Memo } from '../market/ports.ts'

/**
 * A per-instance cache of promises kept `ttlMs`: callers within that time share one answer; a
 * failed answer is dropped at once so the next caller tries again.
 *
 * @example
 * const memo = createMemo(2000)
 * const stats = await memo.cached('stats', () => readStats())
 */
export function createMemo(ttlMs: number, now: () => number = Date.now): Memo {
  const cache = new Map<string, { at: number; value: Promise<unknown> }>()
  return {
    cached<T>(key: string, fn: () => Promise<T>): Promise<T> {
      const hit = cache.get(key)
      if (hit && now() - hit.at < ttlMs) return hit.value as Promise<T>
      const value = fn()
      cache.set(key, { at: now(), value })
      value.catch(() => cache.get(key)?.value === value && cache.delete(key))
      return value
    },
  }
}

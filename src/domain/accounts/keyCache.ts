import type { Principal } from './scopes.ts'

type Entry = { principal: Principal; expiresAt: Date | null; at: number }

const LAST_USED_DEBOUNCE_MS = 60_000

/**
 * Verified keys held in this process's memory for `ttlMs` (0: none), so that the authenticated
 * read path costs no database read. A revocation drops its key at once; a read that began before
 * a revocation does not fill the cache after it (the generation counter).
 *
 * @example
 * const keyCache = createKeyCache({ ttlMs: 2000 })
 * keyCache.revoke(hashApiKey(value))
 */
export function createKeyCache({ ttlMs }: { ttlMs: number }) {
  const entries = new Map<string, Entry>()
  const lastTouched = new Map<string, number>()
  /** Requests that arrive together with one key (its entry just lapsed) share one read. */
  const lookups = new Map<string, Promise<Principal | undefined>>()
  let revocations = 0

  return {
    lookups,
    /** The cached principal when fresh and unexpired; a stale entry is dropped. */
    get(hash: string, now: number): Principal | undefined {
      const hit = entries.get(hash)
      if (hit && now - hit.at < ttlMs && (!hit.expiresAt || hit.expiresAt.getTime() > now)) return hit.principal
      entries.delete(hash)
      return undefined
    },
    /** The current generation, taken before a read. */
    generation: () => revocations,
    /** Caches a principal read at `generation`, unless caching is off or a revocation came since. */
    set(hash: string, entry: Entry, generation: number) {
      if (ttlMs > 0 && generation === revocations) entries.set(hash, entry)
    },
    revoke(hash: string) {
      revocations++
      entries.delete(hash)
      lookups.delete(hash)
    },
    /** True when the key's last use should be written now (at most once a minute per key). */
    shouldTouch(keyId: string, lastUsedAt: Date | null, now: number): boolean {
      const last = lastTouched.get(keyId) ?? lastUsedAt?.getTime() ?? 0
      if (now - last <= LAST_USED_DEBOUNCE_MS) return false
      lastTouched.set(keyId, now)
      return true
    },
  }
}
export type KeyCache = ReturnType<typeof createKeyCache>

import { hashApiKey, hashesEqual, isWellFormedApiKey } from './apiKeyFormat.ts'
import type { KeyCache } from './keyCache.ts'
import type { AccountsRepository } from './ports.ts'
import type { Principal, Scope } from './scopes.ts'

export type AuthenticateKeyDeps = { accounts: AccountsRepository; keyCache: KeyCache }

/**
 * Resolves a bearer key to its principal; undefined for an unknown, expired or deleted key. A
 * malformed key or bad checksum is refused without a database read; the stored SHA-256 is
 * compared in constant time.
 *
 * @example
 * const principal = await authenticateKey(deps, { value: 'cpk_...' })
 */
export async function authenticateKey(deps: AuthenticateKeyDeps, { value }: { value: string }): Promise<Principal | undefined> {
  if (!isWellFormedApiKey(value)) return undefined
  const hash = hashApiKey(value)
  const now = Date.now()
  const hit = deps.keyCache.get(hash, now)
  if (hit) return hit
  const pending = deps.keyCache.lookups.get(hash)
  if (pending) return pending
  const lookup = lookupKey(deps, hash, now).finally(() => deps.keyCache.lookups.delete(hash))
  deps.keyCache.lookups.set(hash, lookup)
  return lookup
}

/** Reads a key by its hash; caches the principal unless a revocation landed meanwhile. */
async function lookupKey({ accounts, keyCache }: AuthenticateKeyDeps, hash: string, now: number): Promise<Principal | undefined> {
  const generation = keyCache.generation()
  const found = await accounts.findKeyByHash(hash)
  if (!found || !hashesEqual(found.key.hash, hash)) return undefined
  const { key, account } = found
  if (key.expiresAt && key.expiresAt.getTime() <= now) return undefined
  const principal: Principal = { accountId: account.id, isOperator: account.isOperator, scopes: key.scopes as Scope[], via: 'key', keyId: key.id }
  keyCache.set(hash, { principal, expiresAt: key.expiresAt ?? null, at: now }, generation)
  if (keyCache.shouldTouch(key.id, key.lastUsedAt ?? null, now)) accounts.touchKey(key.id, new Date(now))
  return principal
}

import { describe, expect, it } from 'vitest'
import { authenticateKey } from './authenticateKey.ts'
import { generateApiKey } from './apiKeyFormat.ts'
import { createKeyCache } from './keyCache.ts'
import type { Account, AccountsRepository, ApiKey } from './ports.ts'

const account = { id: 'acc-1', name: 'a', address: null, isOperator: false, credits: 0, creditsReserved: 0, createdAt: new Date(), updatedAt: new Date() } as Account

/** The repository port in memory, counting reads and touches; `gate` holds a read until released. */
function memoryAccounts(keys: ApiKey[]) {
  const counts = { reads: 0, touches: 0 }
  let gate: Promise<void> | undefined
  const repo = {
    async findKeyByHash(hash: string) {
      counts.reads++
      await gate
      const key = keys.find((k) => k.hash === hash)
      return key && { key, account }
    },
    touchKey: () => void counts.touches++,
  } as unknown as AccountsRepository
  return { repo, counts, hold: (p: Promise<void>) => void (gate = p) }
}

function storedKey(over: Partial<ApiKey> = {}) {
  const g = generateApiKey()
  const key = { id: 'key-1', accountId: account.id, name: 'k', hash: g.hash, hint: g.hint, scopes: ['read'], expiresAt: null, lastUsedAt: null, createdAt: new Date(), ...over } as ApiKey
  return { value: g.value, key }
}

describe('authenticateKey', () => {
  it('refuses a malformed key without a read', async () => {
    const { repo, counts } = memoryAccounts([])
    expect(await authenticateKey({ accounts: repo, keyCache: createKeyCache({ ttlMs: 1000 }) }, { value: 'cpk_nope' })).toBeUndefined()
    expect(counts.reads).toBe(0)
  })

  it('resolves a stored key to its principal, then serves it from the cache and touches it once', async () => {
    const { value, key } = storedKey()
    const { repo, counts } = memoryAccounts([key])
    const deps = { accounts: repo, keyCache: createKeyCache({ ttlMs: 60_000 }) }
    expect(await authenticateKey(deps, { value })).toEqual({ accountId: account.id, isOperator: false, scopes: ['read'], via: 'key', keyId: 'key-1' })
    await authenticateKey(deps, { value })
    expect(counts).toEqual({ reads: 1, touches: 1 })
  })

  it('shares one read between requests that arrive together', async () => {
    const { value, key } = storedKey()
    const { repo, counts } = memoryAccounts([key])
    const deps = { accounts: repo, keyCache: createKeyCache({ ttlMs: 0 }) }
    const all = await Promise.all([1, 2, 3].map(() => authenticateKey(deps, { value })))
    expect(all.every((p) => p?.keyId === 'key-1')).toBe(true)
    expect(counts.reads).toBe(1)
  })

  it('refuses an expired key', async () => {
    const { value, key } = storedKey({ expiresAt: new Date(Date.now() - 1) })
    const { repo } = memoryAccounts([key])
    expect(await authenticateKey({ accounts: repo, keyCache: createKeyCache({ ttlMs: 1000 }) }, { value })).toBeUndefined()
  })

  it('a read that began before a revocation does not fill the cache after it', async () => {
    const { value, key } = storedKey()
    const keys = [key]
    const { repo, counts, hold } = memoryAccounts(keys)
    const keyCache = createKeyCache({ ttlMs: 60_000 })
    let release!: () => void
    hold(new Promise<void>((r) => (release = r)))
    const inFlight = authenticateKey({ accounts: repo, keyCache }, { value })
    keyCache.revoke(key.hash)
    release()
    // The read saw the key as it was before the revocation; the cache must not keep it.
    expect((await inFlight)?.keyId).toBe('key-1')
    keys.length = 0
    expect(await authenticateKey({ accounts: repo, keyCache }, { value })).toBeUndefined()
    expect(counts.reads).toBe(2)
  })
})

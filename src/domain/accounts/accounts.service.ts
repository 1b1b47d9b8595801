import { randomUUID } from 'node:crypto'
import type { EntityManager } from '@mikro-orm/core'
import { AccountSchema, type Account } from './account.entity.ts'
import { ApiKeySchema, type ApiKey } from './apiKey.entity.ts'
import type { Principal, Scope } from './scopes.ts'
import { generateApiKey, hashApiKey, hashesEqual, isWellFormedApiKey } from '../keys/apiKey.ts'
import { NotFoundError } from '../errors.ts'
import { CreditEntrySchema } from '../billing/creditEntry.entity.ts'

export type AccountsDeps = {
  em: EntityManager
  /** How long a verified key may be served from memory; deletes invalidate at once. */
  keyCacheMs: number
  /** Called when a key is deleted, so other nodes drop it from their caches too. */
  onKeyRevoked?: (hash: string) => void
  /** Credits granted to every new account, in the transaction that creates it (STARTER_CREDITS). */
  starterCredits?: number
}

const LAST_USED_DEBOUNCE_MS = 60_000

export type AccountsService = ReturnType<typeof createAccountsService>

/**
 * Accounts, API keys and key authentication.
 *
 * @example
 * const accounts = createAccountsService({ em: orm.em, keyCacheMs: 2000 })
 * const { account, apiKey } = await accounts.createAccountWithKey({ name: 'ops', isOperator: true })
 */
export function createAccountsService(deps: AccountsDeps) {
  const cache = new Map<string, { principal: Principal; expiresAt: Date | null; at: number }>()
  const lastTouched = new Map<string, number>()
  const lookups = new Map<string, Promise<Principal | undefined>>()
  /** Bumped by every revocation: a read that began before one must not fill the cache after it. */
  let revocations = 0
  const fork = () => deps.em.fork()

  function revoked(hash: string) {
    revocations++
    cache.delete(hash)
    lookups.delete(hash)
  }

  /** Reads a key by its hash; caches the principal unless a revocation landed meanwhile. */
  async function lookupKey(hash: string, now: number): Promise<Principal | undefined> {
    const generation = revocations
    const em = fork()
    const key = await em.findOne(ApiKeySchema, { hash })
    if (!key || !hashesEqual(key.hash, hash)) return undefined
    if (key.expiresAt && key.expiresAt.getTime() <= now) return undefined
    const account = await em.findOne(AccountSchema, { id: key.accountId })
    if (!account) return undefined
    const principal: Principal = {
      accountId: account.id,
      isOperator: account.isOperator,
      scopes: key.scopes as Scope[],
      via: 'key',
      keyId: key.id,
    }
    if (deps.keyCacheMs > 0 && generation === revocations) cache.set(hash, { principal, expiresAt: key.expiresAt ?? null, at: now })
    const last = lastTouched.get(key.id) ?? key.lastUsedAt?.getTime() ?? 0
    if (now - last > LAST_USED_DEBOUNCE_MS) {
      lastTouched.set(key.id, now)
      void fork().nativeUpdate(ApiKeySchema, { id: key.id }, { lastUsedAt: new Date(now) }).catch(() => {})
    }
    return principal
  }

  /** Creates the account and its starter grant (ledger ref = the account id) in one transaction. */
  async function createAccount({ name, isOperator = false, address = null }: { name: string; isOperator?: boolean; address?: string | null }) {
    const starter = deps.starterCredits ?? 0
    return fork().transactional(async (em) => {
      const account = em.create(AccountSchema, { id: randomUUID(), name, isOperator, address, credits: starter })
      // Flushed first: the entry's foreign key needs the account row.
      await em.persist(account).flush()
      if (starter > 0) {
        em.create(CreditEntrySchema, { id: randomUUID(), accountId: account.id, kind: 'grant', credits: starter, balanceAfter: starter, ref: account.id })
      }
      return account
    })
  }

  async function createApiKey(accountId: string, { name, scopes, expiresAt = null }: { name: string; scopes: Scope[]; expiresAt?: Date | null }) {
    const em = fork()
    const generated = generateApiKey()
    const key = em.create(ApiKeySchema, {
      id: randomUUID(),
      accountId,
      name,
      hash: generated.hash,
      hint: generated.hint,
      scopes: [...new Set(scopes)],
      expiresAt,
    })
    await em.persist(key).flush()
    return { key, value: generated.value }
  }

  return {
    createAccount,
    createApiKey,

    async createAccountWithKey({ name, isOperator = false }: { name: string; isOperator?: boolean }) {
      const account = await createAccount({ name, isOperator })
      const { value } = await createApiKey(account.id, { name: 'initial', scopes: ['read', 'trade', 'admin'] })
      return { account, apiKey: value }
    },

    async findOrCreateByAddress(address: string): Promise<Account> {
      const em = fork()
      const existing = await em.findOne(AccountSchema, { address })
      if (existing) return existing
      try {
        return await createAccount({ name: address, address })
      } catch {
        // Two first logins at once: the unique address index let one win; read it.
        const again = await fork().findOne(AccountSchema, { address })
        if (!again) throw new Error('account creation failed')
        return again
      }
    },

    async getAccount(id: string): Promise<Account> {
      const account = await fork().findOne(AccountSchema, { id })
      if (!account) throw new NotFoundError('Account')
      return account
    },

    async updateAccount(id: string, patch: { name?: string | undefined }): Promise<Account> {
      const em = fork()
      const account = await em.findOne(AccountSchema, { id })
      if (!account) throw new NotFoundError('Account')
      if (patch.name !== undefined) account.name = patch.name
      await em.flush()
      return account
    },

    async listApiKeys(accountId: string, { limit, after }: { limit: number; after?: { createdAt: string; id: string } | undefined }) {
      const em = fork()
      const at = after ? new Date(after.createdAt) : undefined
      const where = after && at
        ? { accountId, $or: [{ createdAt: { $lt: at } }, { createdAt: at, id: { $lt: after.id } }] }
        : { accountId }
      const rows = await em.find(ApiKeySchema, where, { orderBy: { createdAt: 'desc', id: 'desc' }, limit: limit + 1 })
      return { keys: rows.slice(0, limit), more: rows.length > limit }
    },

    async deleteApiKey(accountId: string, id: string): Promise<ApiKey> {
      const em = fork()
      const key = await em.findOne(ApiKeySchema, { id, accountId })
      if (!key) throw new NotFoundError('API key')
      await em.remove(key).flush()
      revoked(key.hash)
      deps.onKeyRevoked?.(key.hash)
      return key
    },

    /** Drops a key from this node's cache (a revocation seen on another node). */
    forgetKey(hash: string) {
      revoked(hash)
    },

    /**
     * Resolves a bearer key. A malformed key or bad checksum is refused without a database read;
     * the stored SHA-256 is compared in constant time.
     */
    async authenticateKey(value: string): Promise<Principal | undefined> {
      if (!isWellFormedApiKey(value)) return undefined
      const hash = hashApiKey(value)
      const now = Date.now()
      const hit = cache.get(hash)
      if (hit && now - hit.at < deps.keyCacheMs && (!hit.expiresAt || hit.expiresAt.getTime() > now)) {
        return hit.principal
      }
      cache.delete(hash)
      // Requests that arrive together with one key (its cache entry just lapsed) share one read.
      const pending = lookups.get(hash)
      if (pending) return pending
      const lookup = lookupKey(hash, now).finally(() => lookups.delete(hash))
      lookups.set(hash, lookup)
      return lookup
    },
  }
}

/** The public view of a key: never its value or hash. */
export function apiKeyView(key: ApiKey) {
  return {
    id: key.id,
    name: key.name,
    hint: key.hint,
    scopes: key.scopes,
    expiresAt: key.expiresAt?.toISOString() ?? null,
    lastUsedAt: key.lastUsedAt?.toISOString() ?? null,
    createdAt: key.createdAt.toISOString(),
  }
}

export function accountView(a: Account) {
  return {
    id: a.id,
    name: a.name,
    address: a.address ?? null,
    isOperator: a.isOperator,
    credits: a.credits,
    createdAt: a.createdAt.toISOString(),
    updatedAt: a.updatedAt.toISOString(),
  }
}

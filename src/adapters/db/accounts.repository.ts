import { randomUUID } from 'node:crypto'
import type pg from 'pg'
import type { EntityManager } from '@mikro-orm/core'
import { AccountSchema } from '../../domain/accounts/account.entity.ts'
import { ApiKeySchema } from '../../domain/accounts/apiKey.entity.ts'
import type { AccountsRepository } from '../../domain/accounts/ports.ts'
import type { CreditsRepository } from '../../domain/billing/ports.ts'
import { withTransaction } from './transaction.ts'

/**
 * The account aggregate (accounts and their API keys) over the MikroORM entities. Every call
 * works on a fork of the entity manager of its own, so no identity map is shared between requests.
 * The one exception is the account's creation: its row and its starter grant are written in one
 * `withTransaction` on the pool, the grant by the credits store's `append` like every other
 * ledger entry, so the ledger has one writer and the account one way to open a transaction.
 *
 * @example
 * const accounts = createAccountsRepository({ em: db.orm.em, pool: db.pool, credits })
 * const found = await accounts.findKeyByHash(hashApiKey(value))
 */
export function createAccountsRepository({ em, pool, credits }: { em: EntityManager; pool: pg.Pool; credits: Pick<CreditsRepository, 'append'> }): AccountsRepository {
  const fork = () => em.fork()
  return {
    find: (accountId) => fork().findOne(AccountSchema, { id: accountId }).then((a) => a ?? undefined),

    findByAddress: (address) => fork().findOne(AccountSchema, { address }).then((a) => a ?? undefined),

    async create({ name, isOperator, address, starterCredits }) {
      const id = randomUUID()
      await withTransaction(pool, async (db) => {
        await db.query('insert into account (id, name, is_operator, address) values ($1, $2, $3, $4)', [id, name, isOperator, address])
        // The grant moves the balance from 0 and writes its entry (ref = the account id), under the account's lock.
        if (starterCredits > 0) await credits.append({ accountId: id, kind: 'grant', credits: starterCredits, ref: id }, db)
      })
      return fork().findOneOrFail(AccountSchema, { id })
    },

    async rename(accountId, name) {
      const tx = fork()
      const account = await tx.findOne(AccountSchema, { id: accountId })
      if (!account) return undefined
      account.name = name
      await tx.flush()
      return account
    },

    async insertKey(k) {
      const tx = fork()
      const key = tx.create(ApiKeySchema, { id: randomUUID(), ...k })
      await tx.persist(key).flush()
      return key
    },

    async findKeyByHash(hash) {
      const tx = fork()
      const key = await tx.findOne(ApiKeySchema, { hash })
      const account = key && (await tx.findOne(AccountSchema, { id: key.accountId }))
      return key && account ? { key, account } : undefined
    },

    listKeys(accountId, { limit, after }) {
      const at = after ? new Date(after.createdAt) : undefined
      const where = after && at
        ? { accountId, $or: [{ createdAt: { $lt: at } }, { createdAt: at, id: { $lt: after.id } }] }
        : { accountId }
      return fork().find(ApiKeySchema, where, { orderBy: { createdAt: 'desc', id: 'desc' }, limit })
    },

    async deleteKey(accountId, keyId) {
      const tx = fork()
      const key = await tx.findOne(ApiKeySchema, { id: keyId, accountId })
      if (!key) return undefined
      await tx.remove(key).flush()
      return key
    },

    touchKey(keyId, at) {
      void fork().nativeUpdate(ApiKeySchema, { id: keyId }, { lastUsedAt: at }).catch(() => {})
    },
  }
}

import { randomUUID } from 'node:crypto'
import type { EntityManager } from '@mikro-orm/core'
import { AccountSchema } from '../domain/accounts/account.entity.ts'
import { ApiKeySchema } from '../domain/accounts/apiKey.entity.ts'
import { CreditEntrySchema } from '../domain/billing/creditEntry.entity.ts'
import type { AccountsRepository } from '../domain/accounts/ports.ts'

/**
 * The account aggregate (accounts and their API keys) over the MikroORM entities. Every call
 * works on a fork of the entity manager of its own, so no identity map is shared between requests.
 *
 * @example
 * const accounts = createAccountsRepository(db.orm.em)
 * const found = await accounts.findKeyByHash(hashApiKey(value))
 */
export function createAccountsRepository(em: EntityManager): AccountsRepository {
  const fork = () => em.fork()
  return {
    find: (accountId) => fork().findOne(AccountSchema, { id: accountId }).then((a) => a ?? undefined),

    findByAddress: (address) => fork().findOne(AccountSchema, { address }).then((a) => a ?? undefined),

    create({ name, isOperator, address, starterCredits }) {
      return fork().transactional(async (tx) => {
        const account = tx.create(AccountSchema, { id: randomUUID(), name, isOperator, address, credits: starterCredits })
        // Flushed first: the entry's foreign key needs the account row.
        await tx.persist(account).flush()
        if (starterCredits > 0) {
          tx.create(CreditEntrySchema, { id: randomUUID(), accountId: account.id, kind: 'grant', credits: starterCredits, balanceAfter: starterCredits, ref: account.id })
        }
        return account
      })
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

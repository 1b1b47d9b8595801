import type { EntityManager } from '@mikro-orm/core'
import { SessionSchema } from '../../domain/accounts/session.entity.ts'
import type { SessionsRepository } from '../../domain/accounts/ports.ts'

/**
 * Sign-in nonces (the `siwe_nonce` table, no entity: two statements, both keyed by the database
 * clock) and dashboard sessions (the `Session` entity).
 *
 * @example
 * const sessions = createSessionsRepository(db.orm.em)
 * if (!(await sessions.consumeNonce(nonce))) throw new UnauthorizedError()
 */
export function createSessionsRepository(em: EntityManager): SessionsRepository {
  const conn = () => em.fork().getConnection()
  return {
    async insertNonce(nonce, ttlSeconds) {
      await conn().execute(`insert into siwe_nonce (nonce, expires_at) values (?, now() + ? * interval '1 second')`, [nonce, ttlSeconds])
      // Expired nonces are swept as new ones are issued.
      void conn().execute(`delete from siwe_nonce where expires_at < now()`).catch(() => {})
    },

    async consumeNonce(nonce) {
      const consumed = await conn().execute(`delete from siwe_nonce where nonce = ? and expires_at > now() returning nonce`, [nonce])
      return consumed.length > 0
    },

    async insertSession(session) {
      const tx = em.fork()
      tx.create(SessionSchema, session)
      await tx.flush()
    },

    findSession: (idHash) => em.fork().findOne(SessionSchema, { idHash }).then((s) => s ?? undefined),

    async deleteSession(idHash) {
      await em.fork().nativeDelete(SessionSchema, { idHash })
    },
  }
}

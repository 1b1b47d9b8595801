import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { afterAll, beforeAll, inject } from 'vitest'
import { openDatabase, type Database } from '../../src/adapters/db/orm.ts'
import { createLogger } from '../../src/logger.ts'

/** A database of this test file's own, created empty; the app's migrations fill it. */
export async function createTestDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const adminUrl = inject('pgAdminUrl')
  const name = `t_${randomBytes(6).toString('hex')}`
  const admin = new pg.Client({ connectionString: adminUrl })
  await admin.connect()
  await admin.query(`create database ${name}`)
  await admin.end()
  const url = new URL(adminUrl)
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: adminUrl })
      await c.connect()
      // A pool's end() resolves before its connections are closed on the server. Forcing the drop
      // then would kill them mid-goodbye, and that error reaches a client nobody listens to any
      // more (an uncaught exception that fails the run). Wait for them to go first.
      const until = Date.now() + 3000
      while (Date.now() < until) {
        const { rows } = await c.query<{ n: number }>('select count(*)::int as n from pg_stat_activity where datname = $1', [name])
        if (rows[0]!.n === 0) break
        await new Promise((r) => setTimeout(r, 25))
      }
      await c.query(`drop database if exists ${name} with (force)`)
      await c.end()
    },
  }
}

/**
 * A migrated database of this test file's own: opened before the file's tests, closed and dropped
 * after them. Returns a getter, because the database exists only once `beforeAll` has run.
 *
 * @example
 * const db = useMigratedDatabase()
 * it('…', async () => { await db().pool.query('select 1') })
 */
export function useMigratedDatabase({ poolSize = 10 }: { poolSize?: number } = {}): () => Database {
  let db: Database | undefined
  let drop: (() => Promise<void>) | undefined
  beforeAll(async () => {
    const t = await createTestDatabase()
    drop = t.drop
    db = await openDatabase({ url: t.url, poolSize, logger: createLogger({ level: 'silent' }) })
  })
  afterAll(async () => {
    await db?.close()
    await drop?.()
  })
  return () => {
    if (!db) throw new Error('The test database is opened in beforeAll; use it inside a test or hook.')
    return db
  }
}

import type pg from 'pg'

/**
 * Runs `fn` inside BEGIN/COMMIT on one pooled connection; rolls back and rethrows on any error,
 * and always gives the connection back.
 *
 * @example
 * const next = await withTransaction(pool, async (db) => {
 *   const { rows } = await db.query('select next_nonce from wallet_nonce where address = $1 for update', [from])
 *   return rows[0]
 * })
 */
export async function withTransaction<T>(pool: pg.Pool, fn: (db: pg.PoolClient) => Promise<T>): Promise<T> {
  const db = await pool.connect()
  try {
    await db.query('begin')
    const out = await fn(db)
    await db.query('commit')
    return out
  } catch (err) {
    await db.query('rollback').catch(() => {})
    throw err
  } finally {
    db.release()
  }
}

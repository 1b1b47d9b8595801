import type pg from 'pg'

type Db = Pick<pg.Pool, 'query'>

/** The Prometheus gauges' counts, read at scrape time so every node reports the same. */

/** The number of outbox transactions queued or broadcast, not yet confirmed. */
export async function unconfirmedTxCount(db: Db): Promise<number> {
  const { rows } = await db.query<{ n: number }>(`select count(*)::int as n from chain_tx where status in ('queued', 'broadcast')`)
  return rows[0]?.n ?? 0
}

/** The database answers (GET /health); false when it does not. */
export async function pingDatabase(db: Db): Promise<boolean> {
  return db.query('select 1').then(() => true, () => false)
}

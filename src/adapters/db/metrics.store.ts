import type pg from 'pg'

type Db = Pick<pg.Pool, 'query'>

/** The Prometheus gauges' counts, read at scrape time so every node reports the same. */

/** The number of actors per kind and state. */
export async function actorCounts(db: Db): Promise<Array<{ kind: string; status: string; n: number }>> {
  const { rows } = await db.query<{ kind: string; status: string; n: number }>(
    'select kind, status, count(*)::int as n from actor group by kind, status',
  )
  return rows
}

/** The number of effects not yet finished (pending, prepared or sent). */
export async function openEffectCount(db: Db): Promise<number> {
  const { rows } = await db.query<{ n: number }>(`select count(*)::int as n from effect where status in ('pending', 'prepared', 'sent')`)
  return rows[0]?.n ?? 0
}

/** The number of outbox transactions queued or broadcast, not yet confirmed. */
export async function unconfirmedTxCount(db: Db): Promise<number> {
  const { rows } = await db.query<{ n: number }>(`select count(*)::int as n from chain_tx where status in ('queued', 'broadcast')`)
  return rows[0]?.n ?? 0
}

/** The database answers (GET /health); false when it does not. */
export async function pingDatabase(db: Db): Promise<boolean> {
  return db.query('select 1').then(() => true, () => false)
}

import type pg from 'pg'

type Db = Pick<pg.Pool, 'query'>

/** A run actor's row: its state, its machine context and its times. */
export type RunRow<C> = { status: string; ctx: C; created_at: Date | string; updated_at: Date | string }

/** The reads of run actors (the actors of `kind`), by their context's agent id. */

const SELECT = `select status, snapshot->'context' as ctx, created_at, updated_at from actor`

/** A run actor by id (undefined when there is none of that kind). */
export async function findRunRow<C>(db: Db, kind: string, runId: string): Promise<RunRow<C> | undefined> {
  const { rows } = await db.query<RunRow<C>>(`${SELECT} where id = $1 and kind = $2`, [runId, kind])
  return rows[0]
}

/** Run actors by id, in one statement (those of another kind, or none, are left out). */
export async function findRunRows<C>(db: Db, kind: string, runIds: readonly string[]): Promise<Array<RunRow<C> & { id: string }>> {
  const { rows } = await db.query<RunRow<C> & { id: string }>(`select id, ${SELECT.slice('select '.length)} where id = any($1::text[]) and kind = $2`, [runIds, kind])
  return rows
}

/** An agent's run actors of one account, newest first, optionally of one state and before a (created_at, id) cursor. */
export async function listRunRows<C>(
  db: Db,
  kind: string,
  agentId: string,
  { accountId, limit, status, before }: { accountId: string; limit: number; status?: string | undefined; before?: { at: string | Date; id: string } | undefined },
): Promise<Array<RunRow<C>>> {
  const { rows } = await db.query<RunRow<C>>(
    `${SELECT} where kind = $1 and snapshot->'context'->>'agentId' = $2 and account_id = $7 and ($3::text is null or status = $3)
       and ($4::timestamptz is null or (created_at, id) < ($4::timestamptz, $5::text))
     order by created_at desc, id desc limit $6`,
    [kind, agentId, status ?? null, before?.at ?? null, before?.id ?? null, limit, accountId],
  )
  return rows
}

/** An agent's run actor that is queued or running (undefined when there is none). */
export async function findActiveRun(db: Db, kind: string, agentId: string): Promise<{ id: string; account_id: string } | undefined> {
  const { rows } = await db.query<{ id: string; account_id: string }>(
    `select id, account_id from actor where kind = $1 and status in ('queued', 'running') and snapshot->'context'->>'agentId' = $2 limit 1`,
    [kind, agentId],
  )
  return rows[0]
}

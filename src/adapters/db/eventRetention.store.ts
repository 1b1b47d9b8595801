import type pg from 'pg'

/**
 * Deletes one batch of account events older than `retentionHours` (webhooks and `GET /events`
 * retention, docs/api.md), with their webhook deliveries (`on delete cascade`): only events
 * fanned out already and none of whose deliveries is still being tried (`pending`, `failed`: a
 * redelivery asked for late keeps its event until it ends). One statement with a LIMIT, rows
 * locked with SKIP LOCKED: nodes sweeping at once take different rows and none waits. Answers
 * how many events it deleted (fewer than `limit`: nothing more is due).
 *
 * @example
 * while ((await pruneAccountEvents(pool, { retentionHours: 72, limit: 1000 })) === 1000);
 */
export async function pruneAccountEvents(pool: Pick<pg.Pool, 'query'>, { retentionHours, limit }: { retentionHours: number; limit: number }): Promise<number> {
  const { rowCount } = await pool.query(
    `delete from account_event where seq in (
       select e.seq from account_event e
        where e.created_at < now() - make_interval(secs => $1::float8 * 3600) and e.fanned_out_at is not null
          and not exists (select 1 from webhook_delivery d where d.event_seq = e.seq and d.status in ('pending', 'failed'))
        order by e.seq limit $2 for update skip locked)`,
    [retentionHours, limit],
  )
  return rowCount ?? 0
}

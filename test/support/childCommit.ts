/** Runs a query and answers its rows (the app's pool, or a child-process server's database). */
type Query = (sql: string, values?: unknown[]) => Promise<any[]>

/**
 * For each child (ordered by creation): its parent, and whether it was created by the
 * transaction that journaled the parent's `eventType` naming it (`tool.started`, `fire.started`).
 * A row carries the id of the transaction that wrote it as `xmin`, and journal rows are never
 * updated: `same` true means the child exists exactly when its parent recorded it.
 */
export const createdWithParentsRecord = (q: Query, childIds: string[], eventType: string) =>
  q(
    `select c.parent_id, born.xmin = j.xmin as same from actor c
       join actor_journal born on born.actor_id = c.id and born.seq = 1
       join actor_journal j on j.actor_id = c.parent_id and j.event->>'type' = $2 and j.event->>'childId' = c.id
      where c.id = any($1::text[]) order by c.created_at`,
    [childIds, eventType],
  )

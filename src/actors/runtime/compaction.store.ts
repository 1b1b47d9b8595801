import type { Queryable } from './actorRows.ts'
import { contextPath, literal } from './read.store.ts'
import { preparedName } from './sql.ts'

/**
 * One batch of the compaction, in one statement (so a crash leaves the batch whole or untouched):
 * ended actors whose `compact_after` has passed lose their journal, effects, inbox rows and
 * timers, and are stamped `compacted_at`. An actor is skipped while anything of it may still
 * happen or be asked for: an open effect, a timer, an inbox row not yet applied, an unresolved
 * dead letter, a stuck mark, or a child that has not ended. With `quietRows`, an actor of those
 * kinds that started no child also loses those rows of the app's tables (a quiet run's chat
 * messages), in the same statement. Rows are taken `for update skip
 * locked`, so nodes sweeping at once take different actors, and a commit that holds an actor's
 * row (a late event's drain) is never waited for: the actor is taken at a later sweep.
 * Answers the ids compacted.
 *
 * @example
 * while ((await compactEnded(pool, 500)).length === 500);
 */
export async function compactEnded(
  db: Queryable,
  limit: number,
  drops: Readonly<Record<string, readonly string[]>> = {},
  quietRows: Readonly<Record<string, readonly AppRows[]>> = {},
): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>({
    name: preparedName(`actor.compact${dropsKey(drops)}${quietRowsKey(quietRows)}`),
    text: `with due as (
       select a.id, a.kind from actor a
        where a.compacted_at is null and a.compact_after is not null and a.compact_after < now()
          and a.stuck_at is null
          and not exists (select 1 from effect e where e.actor_id = a.id and e.status in ('pending', 'prepared', 'sent'))
          and not exists (select 1 from actor_timer t where t.actor_id = a.id)
          and not exists (select 1 from actor_inbox b where b.actor_id = a.id and (b.processed_at is null or (b.dead_at is not null and b.resolved_at is null)))
          and not exists (select 1 from actor c where c.parent_id = a.id and c.snapshot->>'status' is distinct from 'done')
        order by a.compact_after
        limit $1
          for update of a skip locked
     ), j as (
       delete from actor_journal where actor_id in (select id from due)
     ), e as (
       delete from effect where actor_id in (select id from due)
     ), b as (
       delete from actor_inbox where actor_id in (select id from due)
     ), t as (
       delete from actor_timer where actor_id in (select id from due)
     )${quietRowsDeletes(quietRows)}
     update actor a set compacted_at = now()${snapshotDrops(drops)} from due where a.id = due.id
     returning a.id`,
    values: [limit],
  })
  return rows.map((r) => r.id)
}

/** `, snapshot = case a.kind when 'k' then a.snapshot #- '{context,key}' ... end` for the kinds that drop context keys at compaction (names checked as the read model's). */
function snapshotDrops(drops: Readonly<Record<string, readonly string[]>>): string {
  const whens = Object.entries(drops).filter(([, keys]) => keys.length > 0)
    .map(([kind, keys]) => `when ${literal(kind)} then a.snapshot${keys.map((k) => ` #- ${contextPath([k])}`).join('')}`)
  return whens.length ? `, snapshot = case a.kind ${whens.join(' ')} else a.snapshot end` : ''
}

/** Rows of an app's table keyed by an actor's id (`column` holds it, as a `uuid` when `uuid`), deleted by a quiet actor's compaction. */
export type AppRows = { table: string; column: string; uuid?: boolean }

const IDENT = /^[a-z_][a-z0-9_]*$/

/**
 * `, q0 as (delete from chat_message where turn_id in (...)) ...`: for each kind with `quietRows`,
 * its app rows, of the actors in the batch that started no child (a quiet actor: nothing of it
 * outlives it but its row).
 */
function quietRowsDeletes(quietRows: Readonly<Record<string, readonly AppRows[]>>): string {
  const parts = Object.entries(quietRows).flatMap(([kind, list]) => list.map((r) => {
    if (!IDENT.test(r.table) || !IDENT.test(r.column)) throw new Error(`Not a table or column name: ${r.table}.${r.column}`)
    return { kind, ...r }
  }))
  return parts.map((r, i) => `, q${i} as (
       delete from ${r.table} where ${r.column} in (select d.id${r.uuid ? '::uuid' : ''} from due d where d.kind = ${literal(r.kind)} and not exists (select 1 from actor c where c.parent_id = d.id))
     )`).join('')
}

const quietRowsKey = (quietRows: Readonly<Record<string, readonly AppRows[]>>) => {
  const entries = Object.entries(quietRows).filter(([, list]) => list.length > 0)
  return entries.length ? `:q:${entries.map(([kind, list]) => `${kind}=${list.map((r) => `${r.table}.${r.column}${r.uuid ? '::uuid' : ''}`).join(',')}`).join(';')}` : ''
}

/** A statement name per set of drops (a prepared statement's text is fixed per name; `preparedName` keeps a long one apart by its hash). */
const dropsKey = (drops: Readonly<Record<string, readonly string[]>>) => {
  const entries = Object.entries(drops).filter(([, keys]) => keys.length > 0)
  return entries.length ? `:${entries.map(([kind, keys]) => `${kind}=${keys.join(',')}`).join(';')}` : ''
}

/**
 * One batch of the inbox's expiry: applied inbox rows (not dead letters) older than `olderThanMs`
 * since they were applied are deleted, with their dedupe keys: an event sent again with the same
 * key after that is taken as new (an ended actor refuses it, as it would have refused it before).
 * A row whose dedupe key starts with one of `byKeyPrefix`'s prefixes is kept that prefix's window
 * instead (the longest, where several match). Answers the count deleted.
 */
export async function expireInbox(
  db: Queryable,
  { olderThanMs, byKeyPrefix = {}, limit }: { olderThanMs: number; byKeyPrefix?: Readonly<Record<string, number>>; limit: number },
): Promise<number> {
  const prefixes = Object.entries(byKeyPrefix).map(([prefix, ms]) => ({ prefix, ms }))
  const shortest = Math.min(olderThanMs, ...prefixes.map((p) => p.ms))
  const { rowCount } = await db.query({
    name: 'actor.inbox.expire',
    text: `delete from actor_inbox where seq in (
       select b.seq from actor_inbox b
        where b.processed_at is not null and b.dead_at is null and b.processed_at < now() - $1 * interval '1 millisecond'
          and b.processed_at < now() - coalesce(
                (select max(x.ms) from jsonb_to_recordset($3::jsonb) as x(prefix text, ms bigint) where starts_with(b.dedupe_key, x.prefix)),
                $4) * interval '1 millisecond'
        order by b.processed_at limit $2
          for update skip locked)`,
    values: [shortest, limit, JSON.stringify(prefixes), olderThanMs],
  })
  return rowCount ?? 0
}

/** Ended actors whose window has passed and that are not compacted yet (the compaction's backlog). */
export async function compactionBacklog(db: Queryable): Promise<number> {
  const { rows } = await db.query<{ n: string }>(`select count(*)::bigint as n from actor where compacted_at is null and compact_after is not null and compact_after < now()`)
  return Number(rows[0]?.n ?? 0)
}

/**
 * Claims live actors (not ended) with something to trim: at least two journal entries older than
 * `windowMs` (the second oldest is, read from the primary key). Each is claimed at most once every
 * `everyMs` (`history_trimmed_at`, stamped now, `skip locked`): another node does not take it
 * meanwhile, and a crash before its trim only delays it.
 */
export async function claimLiveHistories(db: Queryable, { windowMs, everyMs, limit }: { windowMs: number; everyMs: number; limit: number }): Promise<Array<{ id: string; kind: string }>> {
  const { rows } = await db.query<{ id: string; kind: string }>({
    name: 'actor.history.claim',
    text: `update actor a set history_trimmed_at = now()
       from (select c.id from actor c
              where c.compact_after is null and c.compacted_at is null and coalesce(c.history_trimmed_at, c.created_at) < now() - $1 * interval '1 millisecond'
                and (select j.at from actor_journal j where j.actor_id = c.id order by j.seq offset 1 limit 1) < now() - $3 * interval '1 millisecond'
              order by coalesce(c.history_trimmed_at, c.created_at) limit $2
                for update skip locked) due
      where a.id = due.id
      returning a.id, a.kind`,
    values: [everyMs, limit, windowMs],
  })
  return rows
}

/** A live actor's journal entries older than `olderThanMs`, oldest first (a leading checkpoint included). */
export async function journalOlderThan(db: Queryable, actorId: string, olderThanMs: number): Promise<Array<{ seq: number; event: { type: string; [key: string]: unknown } }>> {
  const { rows } = await db.query<{ seq: string; event: { type: string } }>(
    `select seq, event from actor_journal where actor_id = $1 and at < now() - $2 * interval '1 millisecond' order by seq`,
    [actorId, olderThanMs],
  )
  return rows.map((r) => ({ seq: Number(r.seq), event: r.event }))
}

/**
 * Replaces a live actor's journal up to `seq` by `checkpoint` (written at `seq`: the snapshot as
 * of that entry), and deletes its finished effects planned up to then (an effect row is written
 * by the commit that journals its entry, at the same `now()`). Nothing is done while an effect
 * planned up to then is still open. One statement. Answers whether it trimmed.
 */
export async function trimHistory(db: Queryable, { actorId, seq, checkpoint }: { actorId: string; seq: number; checkpoint: unknown }): Promise<boolean> {
  const { rows } = await db.query<{ n: string }>({
    name: 'actor.history.trim',
    text: `with cut as (
       select j.at from actor_journal j
        where j.actor_id = $1 and j.seq = $2
          and not exists (select 1 from effect e where e.actor_id = $1 and e.status in ('pending', 'prepared', 'sent') and e.created_at <= j.at)
     ), d as (
       delete from actor_journal where actor_id = $1 and seq < $2 and exists (select 1 from cut)
     ), c as (
       update actor_journal set event = $3::jsonb where actor_id = $1 and seq = $2 and exists (select 1 from cut)
     ), e as (
       delete from effect where actor_id = $1 and status in ('done', 'failed') and created_at <= (select at from cut)
     )
     select count(*) as n from cut`,
    values: [actorId, seq, JSON.stringify(checkpoint)],
  })
  return Number(rows[0]?.n ?? 0) > 0
}

import type pg from 'pg'
import { preparedName } from './sql.ts'

type Db = Pick<pg.Pool, 'query'>

export type RuntimeCounts = {
  /** Every actor kind and state present (a kind added later shows up by itself). Exact: counted by triggers on `actor`. */
  actors: { kind: string; status: string; count: number }[]
  /** Actors started per kind, and the effects of the kinds asked for under their work name, in the last minute and hour. */
  work: { kind: string; lastMinute: number; lastHour: number }[]
  effects: { pending: number; retrying: number; failed: number }
  deadLetters: number
  stuck: number
}

/** Work counted by its effects, by the name it is shown under: `{ firing: 'automation.fire' }`. */
export type EffectWork = Record<string, string>

/** Deltas of `actor_count_delta` beyond which the counts fold them into `actor_count`. */
export const FOLD_AFTER_DELTAS = 2000

/**
 * Folds `actor_count_delta` into `actor_count` in one transaction, so a reader sees either both
 * before or both after. Deltas appended meanwhile stay for the next fold; a concurrent fold
 * skips (the advisory lock), so two never lock the totals in different orders.
 *
 * @example
 * await foldActorCounts(pool)
 */
export async function foldActorCounts(db: Db): Promise<void> {
  await db.query(
    `with l as (select pg_try_advisory_xact_lock(hashtext('actor_count_fold')) as got),
          d as (delete from actor_count_delta where (select got from l) returning kind, status, n),
          s as (select kind, status, sum(n) as n from d group by kind, status)
     insert into actor_count (kind, status, n) select kind, status, n from s order by kind, status
     on conflict (kind, status) do update set n = actor_count.n + excluded.n`,
  )
}

/** A literal of SQL for a kind or work name (letters, digits, `.`, `_`, `-` only), so a partial index on it applies. */
function literal(v: string): string {
  if (!/^[A-Za-z0-9._-]+$/.test(v)) throw new Error(`Not a kind name: ${v}`)
  return `'${v}'`
}

/**
 * The statement of `runtimeCounts`: each part reads a small table or an index, never a whole
 * table: `actor_count` + `actor_count_delta` (kept by triggers on `actor`), `actor_created`,
 * an effect work's partial index (`effect_fire_created`), `effect_open`, `effect_failed`,
 * `actor_inbox_dead_open`, `actor_stuck` (docs/benchmarks.md, "Operator overview").
 */
export function countsStatement(work: EffectWork): string {
  const effectWork = Object.entries(work).map(([name, kind]) => `
               union all
               select ${literal(name)}, (count(*) filter (where created_at > now() - interval '1 minute'))::int, count(*)::int
                 from effect where kind = ${literal(kind)} and created_at > now() - interval '1 hour' having count(*) > 0`).join('')
  return `select
      (select coalesce(json_agg(json_build_object('kind', kind, 'status', status, 'count', n) order by kind, status), '[]')
         from (select kind, status, sum(n)::int n from (select kind, status, n from actor_count union all select kind, status, n from actor_count_delta) t
                group by kind, status having sum(n) <> 0) c) as actors,
      (select count(*)::int from actor_count_delta) as deltas,
      (select coalesce(json_agg(json_build_object('kind', kind, 'lastMinute', m, 'lastHour', h) order by kind), '[]')
         from (select kind, (count(*) filter (where created_at > now() - interval '1 minute'))::int m, count(*)::int h
                 from actor where created_at > now() - interval '1 hour' group by kind${effectWork}) w) as work,
      (select json_build_object('pending', (count(*) filter (where attempts = 0))::int, 'retrying', (count(*) filter (where attempts > 0))::int)
         from effect where status in ('pending', 'prepared', 'sent')) as effects_open,
      (select count(*)::int from effect where status = 'failed') as effects_failed,
      (select count(*)::int from actor_inbox where dead_at is not null and resolved_at is null) as dead_letters,
      (select count(*)::int from actor where stuck_at is not null) as stuck`
}

/**
 * Everything the runtime counts for an overview, in one (prepared) statement; folds the count
 * deltas into the totals after answering once they pile up (one folder at a time).
 *
 * @example
 * const counts = await runtimeCounts(pool, { firing: 'automation.fire' })
 */
export async function runtimeCounts(db: Db, work: EffectWork): Promise<RuntimeCounts> {
  const { rows } = await db.query<Record<string, unknown>>({ name: preparedName(`runtime.counts:${Object.keys(work).join(',')}`), text: countsStatement(work) })
  const r = rows[0]!
  if (Number(r.deltas) > FOLD_AFTER_DELTAS) void foldActorCounts(db).catch(() => {})
  const open = r.effects_open as { pending: number; retrying: number }
  return {
    actors: r.actors as RuntimeCounts['actors'],
    work: r.work as RuntimeCounts['work'],
    effects: { ...open, failed: Number(r.effects_failed) },
    deadLetters: Number(r.dead_letters),
    stuck: Number(r.stuck),
  }
}

/**
 * Actors counted by kind and state, exact, from the trigger-kept totals and their pending deltas.
 *
 * @example
 * const counts = await actorCounts(pool) // [{ kind: 'agent', status: 'running', count: 12 }, ...]
 */
export async function actorCounts(db: Db): Promise<{ kind: string; status: string; count: number }[]> {
  const { rows } = await db.query<{ kind: string; status: string; count: number }>(
    `select kind, status, sum(n)::int as count
       from (select kind, status, n from actor_count union all select kind, status, n from actor_count_delta) t
      group by kind, status having sum(n) <> 0 order by kind, status`,
  )
  return rows
}

/** The number of actors per kind and state, counted on the table itself (the metrics' gauge, read at scrape time). */
export async function scanActorCounts(db: Db): Promise<Array<{ kind: string; status: string; n: number }>> {
  const { rows } = await db.query<{ kind: string; status: string; n: number }>('select kind, status, count(*)::int as n from actor group by kind, status')
  return rows
}

/** The number of effects not yet finished (pending, prepared or sent). */
export async function openEffectCount(db: Db): Promise<number> {
  const { rows } = await db.query<{ n: number }>(`select count(*)::int as n from effect where status in ('pending', 'prepared', 'sent')`)
  return rows[0]?.n ?? 0
}

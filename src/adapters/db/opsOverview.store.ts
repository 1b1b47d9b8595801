import type pg from 'pg'

export type OpsOverviewCounts = {
  /** Every actor kind and state present (agents, launches, wallet operations, chat turns, runs, automations; a kind added later shows up by itself). Exact: counted by triggers on `actor`. */
  actors: { kind: string; status: string; count: number }[]
  /** Actors started per kind (runs, chat turns, launches, wallet operations) and automation firings (`firing`), in the last minute and hour. */
  work: { kind: string; lastMinute: number; lastHour: number }[]
  transactions: { lastMinute: number; lastHour: number }
  effects: { pending: number; retrying: number; failed: number }
  deadLetters: number
  stuck: number
  /** Credits charged for model calls in the last hour (1 credit = 0.001 USD). */
  modelCreditsLastHour: number
  /** Credits held by reservations of calls in flight, over every account. */
  creditsReserved: number
  /** The indexer's last block (null before its first pass). */
  indexedBlock: number | null
}

/** Deltas of `actor_count_delta` beyond which the overview folds them into `actor_count`. */
const FOLD_AFTER_DELTAS = 2000

/**
 * Folds `actor_count_delta` into `actor_count` in one transaction, so a reader sees either both
 * before or both after. Deltas appended meanwhile stay for the next fold; a concurrent fold
 * skips (the advisory lock), so two never lock the totals in different orders.
 *
 * @example
 * await foldActorCounts(pool)
 */
export async function foldActorCounts(pool: pg.Pool): Promise<void> {
  await pool.query(
    `with l as (select pg_try_advisory_xact_lock(hashtext('actor_count_fold')) as got),
          d as (delete from actor_count_delta where (select got from l) returning kind, status, n),
          s as (select kind, status, sum(n) as n from d group by kind, status)
     insert into actor_count (kind, status, n) select kind, status, n from s order by kind, status
     on conflict (kind, status) do update set n = actor_count.n + excluded.n`,
  )
}

/**
 * Everything the operator overview counts, in one statement. Each part reads a small table or an
 * index, never a whole table: `actor_count` + `actor_count_delta` (kept by triggers on `actor`), `actor_created`, `chain_tx_created`,
 * `effect_open`, `effect_failed`, `actor_inbox_dead_open`, `actor_stuck`,
 * `credit_entry_model_usage`, `account_credits_reserved` (docs/benchmarks.md, "Operator overview").
 *
 * @example
 * const counts = await opsOverviewCounts(pool)
 */
export async function opsOverviewCounts(pool: pg.Pool): Promise<OpsOverviewCounts> {
  const { rows } = await pool.query<Record<string, unknown>>({
    name: 'ops.overview',
    text: `select
      (select coalesce(json_agg(json_build_object('kind', kind, 'status', status, 'count', n) order by kind, status), '[]')
         from (select kind, status, sum(n)::int n from (select kind, status, n from actor_count union all select kind, status, n from actor_count_delta) t
                group by kind, status having sum(n) <> 0) c) as actors,
      (select count(*)::int from actor_count_delta) as deltas,
      (select coalesce(json_agg(json_build_object('kind', kind, 'lastMinute', m, 'lastHour', h) order by kind), '[]')
         from (select kind, (count(*) filter (where created_at > now() - interval '1 minute'))::int m, count(*)::int h
                 from actor where created_at > now() - interval '1 hour' group by kind
               union all
               -- An automation's firing is no actor of its own: counted by its effect (index effect_fire_created).
               select 'firing', (count(*) filter (where created_at > now() - interval '1 minute'))::int, count(*)::int
                 from effect where kind = 'automation.fire' and created_at > now() - interval '1 hour' having count(*) > 0) w) as work,
      (select json_build_object('lastMinute', (count(*) filter (where created_at > now() - interval '1 minute'))::int, 'lastHour', count(*)::int)
         from chain_tx where created_at > now() - interval '1 hour') as transactions,
      (select json_build_object('pending', (count(*) filter (where attempts = 0))::int, 'retrying', (count(*) filter (where attempts > 0))::int)
         from effect where status in ('pending', 'prepared', 'sent')) as effects_open,
      (select count(*)::int from effect where status = 'failed') as effects_failed,
      (select count(*)::int from actor_inbox where dead_at is not null and resolved_at is null) as dead_letters,
      (select count(*)::int from actor where stuck_at is not null) as stuck,
      (select coalesce(sum(abs(credits)), 0)::bigint from credit_entry where kind = 'model_usage' and created_at > now() - interval '1 hour') as model_credits,
      (select coalesce(sum(credits_reserved), 0)::bigint from account where credits_reserved > 0) as credits_reserved,
      (select block_number from chain_checkpoint order by chain_id limit 1) as indexed_block`,
  })
  const r = rows[0]!
  // Fold the deltas into the totals once they pile up, after answering (one folder at a time).
  if (Number(r.deltas) > FOLD_AFTER_DELTAS) void foldActorCounts(pool).catch(() => {})
  const open = r.effects_open as { pending: number; retrying: number }
  return {
    actors: r.actors as OpsOverviewCounts['actors'],
    work: r.work as OpsOverviewCounts['work'],
    transactions: r.transactions as OpsOverviewCounts['transactions'],
    effects: { ...open, failed: Number(r.effects_failed) },
    deadLetters: Number(r.dead_letters),
    stuck: Number(r.stuck),
    modelCreditsLastHour: Number(r.model_credits),
    creditsReserved: Number(r.credits_reserved),
    indexedBlock: r.indexed_block === null || r.indexed_block === undefined ? null : Number(r.indexed_block),
  }
}

/**
 * Actors counted by kind and state, exact, from the trigger-kept totals and their pending deltas.
 *
 * @example
 * const counts = await actorCounts(pool) // [{ kind: 'agent', status: 'running', count: 12 }, ...]
 */
export async function actorCounts(pool: pg.Pool): Promise<{ kind: string; status: string; count: number }[]> {
  const { rows } = await pool.query<{ kind: string; status: string; count: number }>(
    `select kind, status, sum(n)::int as count
       from (select kind, status, n from actor_count union all select kind, status, n from actor_count_delta) t
      group by kind, status having sum(n) <> 0 order by kind, status`,
  )
  return rows
}

import { SHARD_COUNT } from './shards.ts'
import type { Queryable } from './sql.ts'

/*
 * What is due, by shard: the timers to fire and the inboxes to drain that a node's poll takes
 * (the actor store's other half; split off for its size).
 */

/** Which actors a node's poll may take: those of the shards it holds (null: all), or every actor when no node is named. */
export type ShardScope = { shards: number[] | null; node: string | null }

/**
 * SQL: `actorId` belongs to a shard in the scope whose lease the node holds at this statement's
 * time on the database clock: a node that lost a lease (frozen, partitioned) between deciding to
 * poll and the statement running takes nothing of that shard. `$s` is the scope's shards, `$n`
 * its node; holding all 64 is one count, not a test per row.
 */
export function heldShardSql(actorId: string, s: string, n: string): string {
  const held = `select shard from shard_lease where owner = ${n} and expires_at > now()`
  return `(${n}::text is null or case when ${s}::smallint[] is null then (select count(*) from shard_lease where owner = ${n} and expires_at > now()) = ${SHARD_COUNT}
    else ${actorId} in (select id from actor where shard = any(array(${held} and shard = any(${s}::smallint[])))) end)`
}

/** A due timer turned into its actor's inbox row by a claim: the row as the drain applies it, and whether older rows wait before it. */
export type ClaimedTimerEvent = { actor_id: string; seq: string; event: unknown; timer_key: string; timer_generation: string; behind: boolean }

/**
 * Claims due timers: each becomes an inbox event (dedupe key = actor:timer:generation) and its
 * row is deleted, in one statement, for the actors in scope (fenced by the node's shard leases).
 * SKIP LOCKED lets several nodes share the work. Answers the inbox rows it wrote, each saying
 * whether its actor had older unprocessed rows (`behind`): an actor with none can apply its new
 * rows as answered here, without reading its inbox again.
 */
export async function claimDueTimerEvents(db: Queryable, scope: ShardScope = { shards: null, node: null }, limit = 500): Promise<ClaimedTimerEvent[]> {
  const { rows } = await db.query<ClaimedTimerEvent>({
    name: 'actor.claim_timers',
    text: `with due as (
       select actor_id, timer_key from actor_timer
        where due_at <= now() and ${heldShardSql('actor_id', '$2', '$3')}
        order by due_at limit $1 for update skip locked
     ), del as (
       delete from actor_timer t using due
        where t.actor_id = due.actor_id and t.timer_key = due.timer_key
       returning t.actor_id, t.account_id, t.timer_key, t.generation, t.event, t.due_at
     )
     insert into actor_inbox (actor_id, account_id, event, dedupe_key, timer_key, timer_generation, timer_due_at)
     select actor_id, account_id, event, 'timer:' || actor_id || ':' || timer_key || ':' || generation, timer_key, generation, due_at
       from del
     on conflict (dedupe_key) do nothing
     returning actor_id, seq, event, timer_key, timer_generation,
       exists (select 1 from actor_inbox o where o.actor_id = actor_inbox.actor_id and o.processed_at is null) as behind`,
    values: [limit, scope.shards, scope.node],
  })
  return rows
}

/** Claims due timers (see claimDueTimerEvents); answers the actors whose inbox got an event. */
export async function claimDueTimers(db: Queryable, scope: ShardScope = { shards: null, node: null }, limit = 500): Promise<string[]> {
  return [...new Set((await claimDueTimerEvents(db, scope, limit)).map((r) => r.actor_id))]
}

/** Milliseconds until the earliest timer is due (undefined when there is none). */
export async function nextTimerDelay(db: Queryable): Promise<number | undefined> {
  const { rows } = await db.query<{ ms: number | null }>(
    {
      name: 'actor.next_timer',
      // min() of no rows is null, and greatest() would turn that into 0: "due now", forever.
      text: `select case when min(due_at) is null then null
                     else greatest(0, extract(epoch from (min(due_at) - now())) * 1000)::float8 end as ms
               from actor_timer`,
    },
  )
  return rows[0]?.ms ?? undefined
}

/**
 * Actors of the held shards with inbox rows not processed yet (written outside the runtime, or
 * left by a drain that died), at most `limit`. `skip`: actors this node knows it cannot load
 * (marked stuck, awaiting an operator): their rows stay, and left in the scan they would fill it
 * poll after poll and hide every other inbox behind them.
 */
export async function actorsWithPendingInbox(db: Queryable, scope: ShardScope = { shards: null, node: null }, limit = 500, skip: readonly string[] = []): Promise<string[]> {
  const { rows } = await db.query<{ actor_id: string }>(
    `select distinct actor_id from actor_inbox
      where processed_at is null and ${heldShardSql('actor_id', '$2', '$3')}
        and ($4::text[] is null or actor_id <> all($4::text[]))
      limit $1`,
    [limit, scope.shards, scope.node, skip.length > 0 ? skip : null],
  )
  return rows.map((r) => r.actor_id)
}

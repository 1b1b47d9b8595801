import type pg from 'pg'
import { preparedName, withBranches, type SqlWrite } from './sql.ts'
import { timerRows, type CommitParams, type Queryable, type ActorRow, type Notify } from './actorRows.ts'

export type { Queryable, ActorRow, TimerUpsert, NewEffect, EffectClaim, CommitParams, EffectFinish, Notify } from './actorRows.ts'

/**
 * The commit of one or several actors' transitions, in one statement: one round trip and atomic
 * without BEGIN/COMMIT. Each snapshot update is fenced by its expected version, and every other
 * write hangs off the actor row that passed its fence, so a lost race writes nothing for that
 * actor and leaves the others alone. An event from the inbox is also fenced by its row still
 * being unprocessed: two nodes that both read the same inbox row cannot both apply it (the
 * loser would otherwise reload the actor and apply the event a second time).
 */
const COMMIT_INPUT = `
with input as (
  select * from jsonb_to_recordset($1::jsonb) as x(
    id text, expected bigint, snapshot jsonb, status text, state_value jsonb, timers jsonb, event jsonb,
    inbox_seq bigint, effects jsonb, timer_deletes jsonb, timer_upserts jsonb, notify jsonb,
    claimed_by text, lease_ms bigint, empty_inbox boolean, finish jsonb, retain_ms bigint, trace text)
)`
const COMMIT_WRITES = `, fl as (
  select e.id, i.id as actor_id from input i join effect e on e.id = i.finish->>'id'
   where e.claimed_by = i.finish->>'owner' and e.lease_until > now() and e.status in ('pending', 'prepared', 'sent')
     for update of e
), upd as (
  update actor a set snapshot = i.snapshot, status = i.status, state_value = i.state_value, timers = i.timers,
         version = a.version + 1, updated_at = now(),
         compact_after = case when i.retain_ms is null then a.compact_after else now() + i.retain_ms * interval '1 millisecond' end
    from input i
   where a.id = i.id and a.version = i.expected
     and (i.inbox_seq is null or exists (select 1 from actor_inbox b where b.seq = i.inbox_seq and b.processed_at is null))
     and (i.empty_inbox is not true or not exists (select 1 from actor_inbox b where b.actor_id = i.id and b.processed_at is null))
     and (i.finish is null or exists (select 1 from fl where fl.actor_id = i.id))
  returning a.id, a.account_id, a.version
), ok as (
  select upd.id, upd.account_id, upd.version, i.event, i.state_value, i.inbox_seq, i.effects, i.timer_deletes, i.timer_upserts, i.notify,
         i.claimed_by, i.lease_ms, i.finish, i.trace
    from upd join input i on i.id = upd.id
), j as (
  insert into actor_journal (actor_id, seq, account_id, event, state_value, trace)
  select id, version, account_id, event, state_value, trace from ok
), ib as (
  update actor_inbox b set processed_at = now() from ok where b.seq = ok.inbox_seq
), ef as (
  insert into effect (id, actor_id, account_id, kind, params, status, claimed_by, lease_until, trace)
  select e.id, ok.id, ok.account_id, e.kind, e.params, 'pending', ok.claimed_by,
         case when ok.claimed_by is null then null else clock_timestamp() + ok.lease_ms * interval '1 millisecond' end, e.trace
    from ok, jsonb_to_recordset(ok.effects) as e(id text, kind text, params jsonb, trace text)
), fe as (
  update effect e set status = ok.finish->>'status', result = ok.finish->'result', last_error = ok.finish->>'error',
         lease_until = null, updated_at = now()
    from ok where ok.finish is not null and e.id = ok.finish->>'id'
), td as (
  delete from actor_timer t using ok
   where t.actor_id = ok.id and t.timer_key in (select jsonb_array_elements_text(ok.timer_deletes))
), ti as (
  insert into actor_timer (actor_id, timer_key, account_id, generation, due_at, event)
  select ok.id, t.key, ok.account_id, t.generation, now() + t.delay_ms * interval '1 millisecond', t.event
    from ok, jsonb_to_recordset(ok.timer_upserts) as t(key text, generation bigint, delay_ms bigint, event jsonb)
  on conflict (actor_id, timer_key) do update
     set generation = excluded.generation, due_at = excluded.due_at, event = excluded.event
), nt as (
  insert into actor_inbox (actor_id, account_id, event, dedupe_key, trace)
  select n->>'actorId', ok.account_id, n->'event', n->>'dedupeKey', n->>'trace'
    from ok cross join lateral jsonb_array_elements(case when jsonb_typeof(ok.notify) = 'array' then ok.notify else '[]'::jsonb end) n
  on conflict (dedupe_key) do nothing
)`
const COMMIT_WITH = `${COMMIT_INPUT}${COMMIT_WRITES}`
const COMMIT_SQL = `${COMMIT_WITH}
select id, version::int as version from upd`


/** Applies one transition. Returns the new version, or undefined when another writer won the race. */
export async function commitTransition(db: Queryable, p: CommitParams): Promise<number | undefined> {
  return (await commitTransitions(db, [p]))[0]
}

/**
 * Commits several actors' transitions (at most one per actor) in one statement. Returns each
 * one's new version, or undefined for those that lost their version race.
 */
export async function commitTransitions(db: Queryable, ps: CommitParams[]): Promise<Array<number | undefined>> {
  // Named: prepared once per connection, not parsed and planned on every event.
  const { rows } = await db.query<{ id: string; version: number }>({ name: 'actor.commit', text: COMMIT_SQL, values: [commitInput(ps)] })
  const versions = new Map(rows.map((r) => [r.id, r.version]))
  return ps.map((p) => versions.get(p.id))
}

/** SQLSTATE of `actor_commit_refused()` (the runtime's schema, src/actors/runtime/schema/baseline.ts). */
const COMMIT_REFUSED = 'AR409'

/**
 * One actor's transition with `writes` in the same statement (an effect's outcome with the
 * charge and the message it wrote): one round trip, atomic without BEGIN/COMMIT. When a fence
 * refuses the transition, the statement fails as a whole (`actor_commit_refused()`), so none of
 * the writes is made either: answers undefined, as a lost race does. The writes are declared
 * before the transition's own: Postgres runs the data-modifying WITH branches the query does not
 * read after it, last declared first, so the writes run last, and a write that locks a row other
 * statements wait for (an account's, in a charge) holds it for the end of the statement and its
 * commit only (declared after, it held it through the journal, inbox, effect and timer writes).
 */
export async function commitTransitionWith(db: Queryable, p: CommitParams, writes: readonly SqlWrite[]): Promise<number | undefined> {
  const more = withBranches(writes, 1)
  try {
    const { rows } = await db.query<{ version: number }>({
      name: preparedName(`actor.commit+${writes.map((w) => w.name).join('+')}`),
      text: `${COMMIT_INPUT}${more.text}${COMMIT_WRITES}
select id, version::int as version from upd
union all select null, actor_commit_refused() where not exists (select 1 from upd)`,
      values: [commitInput([p]), ...more.values],
    })
    return rows[0]?.version
  } catch (err) {
    if ((err as { code?: string }).code === COMMIT_REFUSED) return undefined
    throw err
  }
}

/** The commit statement's one parameter: the transitions as a JSON array. */
function commitInput(ps: CommitParams[]): string {
  const input = ps.map((p) => ({
    id: p.id,
    expected: p.expectedVersion,
    snapshot: p.snapshot,
    status: p.status,
    state_value: p.stateValue,
    timers: p.timers,
    event: p.event,
    inbox_seq: p.inboxSeq,
    effects: p.effects,
    timer_deletes: p.timerDeletes,
    timer_upserts: timerRows(p.timerUpserts),
    notify: p.notify?.length ? p.notify : null,
    claimed_by: p.claim?.owner ?? null,
    lease_ms: p.claim?.leaseMs ?? null,
    empty_inbox: p.requireEmptyInbox ?? false,
    finish: p.finishEffect ?? null,
    retain_ms: p.retainMs ?? null,
    trace: p.trace ?? null,
  }))
  return JSON.stringify(input)
}

export { insertActor, insertActorWrite, type AlongsideWrite, type InsertActorParams } from './actorInsert.store.ts'

export async function loadActor(db: Queryable, id: string): Promise<ActorRow | undefined> {
  const { rows } = await db.query<ActorRow>({ name: 'actor.load', text: 'select * from actor where id = $1', values: [id] })
  return rows[0]
}

/** Locks an actor's row in the caller's transaction and reads it (undefined when there is no such actor). */
export async function lockActor(db: Queryable, id: string): Promise<ActorRow | undefined> {
  const { rows } = await db.query<ActorRow>({ name: 'actor.lock', text: 'select * from actor where id = $1 for update', values: [id] })
  return rows[0]
}

/** Moves an actor to another account (its row only; the caller holds the row's lock). */
export async function setActorAccount(db: Queryable, id: string, accountId: string): Promise<void> {
  await db.query('update actor set account_id = $2 where id = $1', [id, accountId])
}

/** When an actor was created and last changed (undefined when there is no such actor). */
export async function actorTimes(db: Queryable, id: string): Promise<{ created_at: Date; updated_at: Date } | undefined> {
  const { rows } = await db.query<{ created_at: Date; updated_at: Date }>('select created_at, updated_at from actor where id = $1', [id])
  return rows[0]
}

export type InboxRow = {
  seq: string
  event: unknown
  timer_key: string | null
  timer_generation: string | null
  /** The trace context stored with the row (TraceHooks), or null; absent on rows read without it. */
  trace?: string | null
}

export async function pendingInbox(db: Queryable, actorId: string, limit = 100): Promise<InboxRow[]> {
  const { rows } = await db.query<InboxRow>({
    name: 'actor.inbox.pending',
    text: `select seq, event, timer_key, timer_generation, trace from actor_inbox
      where actor_id = $1 and processed_at is null order by seq limit $2`,
    values: [actorId, limit],
  })
  return rows
}

/** True when the inbox row was already applied (by this node or another). */
export async function inboxProcessed(db: Queryable, seq: string): Promise<boolean> {
  const { rows } = await db.query<{ done: boolean }>('select processed_at is not null as done from actor_inbox where seq = $1', [seq])
  return rows[0]?.done ?? true
}

export async function markInboxProcessed(db: Queryable, seq: string): Promise<void> {
  await db.query('update actor_inbox set processed_at = now() where seq = $1', [seq])
}

/**
 * Marks an inbox row processed without a transition (its event is refused, or a stale timer),
 * only while the actor is still at `version`: the decision was taken on that version. False
 * when the row was already processed or the actor has moved on (reload and decide again).
 */
export async function dropInboxAt(db: Queryable, { seq, actorId, version }: { seq: string; actorId: string; version: number }): Promise<boolean> {
  const { rowCount } = await db.query(
    `update actor_inbox set processed_at = now()
      where seq = $1 and processed_at is null and exists (select 1 from actor where id = $2 and version = $3)`,
    [seq, actorId, version],
  )
  return (rowCount ?? 0) > 0
}

/** The actor's committed version (undefined when there is no such actor). */
export async function currentVersion(db: Queryable, id: string): Promise<number | undefined> {
  const { rows } = await db.query<{ version: string }>({ name: 'actor.version', text: 'select version from actor where id = $1', values: [id] })
  return rows[0] ? Number(rows[0].version) : undefined
}

/** Whether the actor has reached a final state (or is gone): it takes no more events. */
export async function actorEnded(db: Queryable, id: string): Promise<boolean> {
  const { rows } = await db.query<{ ended: boolean }>({ name: 'actor.ended', text: `select snapshot->>'status' = 'done' as ended from actor where id = $1`, values: [id] })
  return rows[0]?.ended ?? true
}

/** Marks an actor stuck for an operator (its first reason is kept until an operator clears it). */
export async function markStuck(db: Queryable, id: string, reason: string): Promise<void> {
  await db.query(`update actor set stuck_reason = coalesce(stuck_reason, $2), stuck_at = coalesce(stuck_at, now()) where id = $1`, [id, reason])
}

/** Dead-letters an inbox row: kept, marked processed and dead with its error; its actor is marked stuck. */
export async function deadLetter(db: Queryable, { seq, actorId, error }: { seq: string; actorId: string; error: string }): Promise<void> {
  await db.query(
    `with d as (update actor_inbox set processed_at = now(), dead_at = now(), error = $3 where seq = $1)
     update actor set stuck_reason = coalesce(stuck_reason, 'dead letter ' || $1 || ': ' || $3), stuck_at = coalesce(stuck_at, now())
      where id = $2`,
    [seq, actorId, error],
  )
}

/**
 * Commits a snapshot migrated to the kind's current machine version as a version of its own, if
 * the row has not moved: the row takes the migrated snapshot (and the status and state value it
 * resolves to), and the journal the migration entry at the new version, so the journal keeps one
 * entry per version and replay sees where the machine changed (`replay.ts`).
 */
export async function saveMigratedSnapshot(
  db: Queryable,
  { id, version, snapshot, machineVersion, status, stateValue, event }:
    { id: string; version: number; snapshot: unknown; machineVersion: number; status: string; stateValue: unknown; event: unknown },
): Promise<boolean> {
  const { rowCount } = await db.query(
    `with upd as (
       update actor set snapshot = $3::jsonb, machine_version = $4, status = $5, state_value = $6::jsonb, version = version + 1
        where id = $1 and version = $2
       returning id, account_id, version)
     insert into actor_journal (actor_id, seq, account_id, event, state_value)
     select id, version, account_id, $7::jsonb, $6::jsonb from upd`,
    [id, version, JSON.stringify(snapshot), machineVersion, status, JSON.stringify(stateValue), JSON.stringify(event)],
  )
  return (rowCount ?? 0) > 0
}

/** Inserts an event into an actor's inbox; a repeated dedupe key is ignored. */
export async function enqueue(
  db: Queryable,
  { actorId, accountId, event, dedupeKey, trace = null }: { actorId: string; accountId: string; event: unknown; dedupeKey: string | null; trace?: string | null },
): Promise<boolean> {
  const { rowCount } = await db.query(
    `insert into actor_inbox (actor_id, account_id, event, dedupe_key, trace) values ($1, $2, $3::jsonb, $4, $5)
     on conflict (dedupe_key) do nothing`,
    [actorId, accountId, JSON.stringify(event), dedupeKey, trace],
  )
  return (rowCount ?? 0) > 0
}

export { heldShardSql, claimDueTimers, claimDueTimerEvents, nextTimerDelay, actorsWithPendingInbox, type ShardScope, type ClaimedTimerEvent } from './scheduleStore.ts'

import type { EffectRow } from './actorKind.ts'
import type { Queryable } from './actorStore.ts'
import { heldShardSql, type ShardScope } from './scheduleStore.ts'

type EffectDbRow = {
  id: string
  actor_id: string
  account_id: string
  kind: string
  params: unknown
  status: EffectRow['status']
  external_ref: string | null
  result: unknown
  attempts: number
  first_run: boolean
  trace: string | null
}

const toEffect = (r: EffectDbRow): EffectRow => ({
  id: r.id,
  actorId: r.actor_id,
  accountId: r.account_id,
  kind: r.kind,
  params: r.params,
  status: r.status,
  externalRef: r.external_ref,
  result: r.result,
  attempts: r.attempts,
  firstRun: r.first_run,
  trace: r.trace,
})

const OPEN = `status in ('pending', 'prepared', 'sent')`

/**
 * Claims open effects for one worker: rows nobody holds (or whose lease expired) are locked with
 * SKIP LOCKED, so two workers never claim the same row, and get `claimed_by` and `lease_until`.
 * Pick the ones due for a (re)try of the actors in scope (the shards whose leases the scope's
 * node holds at this statement's time; every actor when it names no node), or one actor's.
 */
export async function claimEffects(
  db: Queryable,
  { owner, leaseMs, actorId, scope = { shards: null, node: null }, limit = 200 }: { owner: string; leaseMs: number; actorId?: string; scope?: ShardScope; limit?: number },
): Promise<EffectRow[]> {
  const pick = actorId ? 'actor_id = $4' : `next_attempt_at <= now() and ${heldShardSql('actor_id', '$4', '$5')}`
  const { rows } = await db.query<EffectDbRow>({
    name: `effect.claim.${actorId ? 'actor' : 'due'}`,
    text: `with c as (
             select id, claimed_by is null and attempts = 0 as first_run from effect
              where ${OPEN} and ${pick} and (lease_until is null or lease_until < now())
              order by next_attempt_at limit $3 for update skip locked
           )
           update effect e set claimed_by = $1, lease_until = now() + $2 * interval '1 millisecond'
             from c where e.id = c.id
           returning e.id, e.actor_id, e.account_id, e.kind, e.params, e.status, e.external_ref, e.result, e.attempts, c.first_run, e.trace`,
    values: actorId ? [owner, leaseMs, limit, actorId] : [owner, leaseMs, limit, scope.shards, scope.node],
  })
  return rows.map(toEffect)
}

/** Extends a held lease; false when this worker no longer holds it (it expired and was taken over, or its node was retired). */
export async function renewLease(db: Queryable, id: string, { owner, leaseMs }: { owner: string; leaseMs: number }): Promise<boolean> {
  const { rowCount } = await db.query(
    `update effect set lease_until = now() + $3 * interval '1 millisecond' where id = $1 and claimed_by = $2 and lease_until is not null and ${OPEN}`,
    [id, owner, leaseMs],
  )
  return (rowCount ?? 0) > 0
}

export async function recordEffectProgress(
  db: Queryable,
  id: string,
  u: { status: 'prepared' | 'sent'; externalRef?: string | undefined; result?: unknown },
): Promise<void> {
  await db.query(
    `update effect set status = $2, external_ref = coalesce($3, external_ref),
            result = coalesce($4::jsonb, result), updated_at = now()
      where id = $1 and ${OPEN}`,
    [id, u.status, u.externalRef ?? null, u.result === undefined ? null : JSON.stringify(u.result)],
  )
}

/**
 * Marks an effect finished and reports its outcome to the actor's inbox, atomically; `event:
 * null` reports nothing (the outcome is only recorded). Only the lease holder may finish, while
 * its lease lasts: a worker whose lease expired or was released (its node was retired) or taken
 * over writes nothing. Returns whether this call finished it.
 */
export async function finishEffect(
  db: Queryable,
  effect: EffectRow,
  { owner, status, event, result = event, error }: { owner: string; status: 'done' | 'failed'; event: unknown; result?: unknown; error?: string },
): Promise<boolean> {
  const { rows } = await db.query<{ id: string }>({
    name: 'effect.finish',
    text: `with upd as (
       update effect set status = $2, result = $3::jsonb, last_error = $4, lease_until = null, updated_at = now()
        where id = $1 and claimed_by = $6 and lease_until > now() and ${OPEN}
       returning id, actor_id, account_id, trace
     ), ib as (
       insert into actor_inbox (actor_id, account_id, event, dedupe_key, trace)
       select actor_id, account_id, $5::jsonb, 'effect:' || id, trace from upd where $5::jsonb is not null
       on conflict (dedupe_key) do nothing
     )
     select id from upd`,
    values: [effect.id, status, JSON.stringify(result ?? null), error ?? null, event === null ? null : JSON.stringify(event), owner],
  })
  return rows.length > 0
}

/** Releases the lease and schedules another attempt; the failed attempt joins the effect's `attempt_log` (its last 20). */
export async function deferEffect(
  db: Queryable,
  id: string,
  { owner, delayMs, error }: { owner: string; delayMs: number; error: string },
): Promise<void> {
  await db.query(
    `update effect set attempts = attempts + 1, last_error = $3, claimed_by = null, lease_until = null,
            next_attempt_at = now() + $2 * interval '1 millisecond', updated_at = now(),
            attempt_log = (select case when jsonb_array_length(l) > 20 then l - 0 else l end from (
              select coalesce(attempt_log, '[]'::jsonb)
                     || jsonb_build_array(jsonb_build_object('attempt', attempts + 1, 'endedAt', now(), 'error', left($3, 500))) as l) x)
      where id = $1 and claimed_by = $4`,
    [id, delayMs, error, owner],
  )
}

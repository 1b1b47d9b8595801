import type pg from 'pg'
import { withTransaction } from './sql.ts'

/** A write of the caller's that commits with the runtime's own (an audit row), given the transaction and what changed. */
export type Alongside<T> = (tx: pg.PoolClient, done: T) => Promise<void>

export type ResolvedDeadLetter = {
  actorId: string
  accountId: string
  seq: number
  event: unknown
  error: string
  resolution: 'retried' | 'discarded'
  /** The dedupe key the event was enqueued again under (a retry), null for a discard. */
  dedupeKey: string | null
}

/**
 * Resolves one open dead letter in one transaction: marks it `retried` (its event enqueued again
 * under the dedupe key `ops-retry:<seq>`) or `discarded`, clears the actor's stuck mark when no
 * open dead letter is left and the mark was for one, and runs the caller's `alongside` write.
 * Undefined when the dead letter does not exist or was already resolved.
 *
 * @example
 * const done = await resolveDeadLetter(pool, { seq, resolution: 'retried' }, (tx, d) => audit(tx, d))
 */
export async function resolveDeadLetter(
  pool: pg.Pool,
  { seq, resolution }: { seq: number; resolution: 'retried' | 'discarded' },
  alongside?: Alongside<ResolvedDeadLetter>,
): Promise<ResolvedDeadLetter | undefined> {
  return withTransaction(pool, async (tx) => {
    const { rows } = await tx.query<{ actor_id: string; account_id: string; event: unknown; error: string }>(
      `update actor_inbox set resolved_at = now(), resolution = $2
        where seq = $1 and dead_at is not null and resolved_at is null
        returning actor_id, account_id, event, error`,
      [seq, resolution],
    )
    const dead = rows[0]
    if (!dead) return undefined
    const dedupeKey = resolution === 'retried' ? `ops-retry:${seq}` : null
    if (dedupeKey) {
      await tx.query(
        `insert into actor_inbox (actor_id, account_id, event, dedupe_key) values ($1, $2, $3::jsonb, $4) on conflict (dedupe_key) do nothing`,
        [dead.actor_id, dead.account_id, JSON.stringify(dead.event), dedupeKey],
      )
    }
    await tx.query(
      `update actor set stuck_reason = null, stuck_at = null
        where id = $1 and stuck_reason like 'dead letter %'
          and not exists (select 1 from actor_inbox where actor_id = $1 and dead_at is not null and resolved_at is null)`,
      [dead.actor_id],
    )
    const done: ResolvedDeadLetter = { actorId: dead.actor_id, accountId: dead.account_id, seq, event: dead.event, error: dead.error, resolution, dedupeKey }
    await alongside?.(tx, done)
    return done
  })
}

export type ClearedStuck = { actorId: string; accountId: string; stuckReason: string | null; stuckAt: string }

/**
 * Clears an actor's stuck mark (an operator understood its cause) and runs the caller's
 * `alongside` write with the mark it had, in one transaction. Undefined when the actor is not
 * stuck (or does not exist).
 *
 * @example
 * await clearStuck(pool, actorId, (tx, cleared) => audit(tx, cleared))
 */
export async function clearStuck(pool: pg.Pool, actorId: string, alongside?: Alongside<ClearedStuck>): Promise<ClearedStuck | undefined> {
  return withTransaction(pool, async (tx) => {
    const { rows } = await tx.query<{ account_id: string; stuck_reason: string | null; stuck_at: Date | string }>(
      `with old as (select account_id, stuck_reason, stuck_at from actor where id = $1 and stuck_at is not null for update)
       update actor a set stuck_reason = null, stuck_at = null from old where a.id = $1
       returning old.account_id, old.stuck_reason, old.stuck_at`,
      [actorId],
    )
    const row = rows[0]
    if (!row) return undefined
    const done: ClearedStuck = { actorId, accountId: row.account_id, stuckReason: row.stuck_reason, stuckAt: new Date(row.stuck_at).toISOString() }
    await alongside?.(tx, done)
    return done
  })
}

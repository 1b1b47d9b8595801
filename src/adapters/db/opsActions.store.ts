import type pg from 'pg'
import type { Queryable } from '../../domain/billing/ports.ts'
import { withTransaction } from './transaction.ts'

/** The operator behind a console action, as the audit trail records it. */
export type OpsOperator = { accountId: string; via: 'key' | 'session'; keyId: string | null; address: string | null }

export type OpsAuditEntry = {
  /** The account that owns the subject (so its own trail shows what an operator did to it). */
  accountId: string
  subjectId: string
  action: string
  operator: OpsOperator
  reason: string
  before?: unknown
  after?: unknown
}

/**
 * Writes one operator action to `audit_log`: who (`actor.type = 'operator'`), why (`after.reason`),
 * what it was before and after; effective at once.
 *
 * @example
 * await writeOpsAudit(tx, { accountId, subjectId: actorId, action: 'ops.deadletter.retry', operator, reason, after: { seq } })
 */
export async function writeOpsAudit(db: Queryable, e: OpsAuditEntry): Promise<void> {
  await db.query(
    `insert into audit_log (account_id, subject_id, action, data, actor, before, after, effective_at)
     values ($1, $2, $3, jsonb_build_object('reason', $4::text), $5::jsonb, $6::jsonb, $7::jsonb, now())`,
    [
      e.accountId, e.subjectId, e.action, e.reason,
      JSON.stringify({ type: 'operator', ...e.operator }),
      JSON.stringify(e.before ?? null),
      JSON.stringify({ ...(e.after && typeof e.after === 'object' ? e.after : {}), reason: e.reason }),
    ],
  )
}

export type DeadLetterOutcome = { actorId: string; accountId: string; seq: number; event: unknown; resolution: 'retried' | 'discarded'; dedupeKey: string | null }

/**
 * Resolves one open dead letter in one transaction: marks it `retried` (its event enqueued again
 * under the dedupe key `ops-retry:<seq>`) or `discarded`, clears the actor's stuck mark when no
 * open dead letter is left and the mark was for one, and audits it. Undefined when the dead
 * letter does not exist or was already resolved.
 *
 * @example
 * const done = await resolveDeadLetter(pool, { seq, resolution: 'retried', operator, reason: 'parser fixed in 1.4' })
 */
export async function resolveDeadLetter(
  pool: pg.Pool,
  { seq, resolution, operator, reason }: { seq: number; resolution: 'retried' | 'discarded'; operator: OpsOperator; reason: string },
): Promise<DeadLetterOutcome | undefined> {
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
    await writeOpsAudit(tx, {
      accountId: dead.account_id, subjectId: dead.actor_id, action: `ops.deadletter.${resolution === 'retried' ? 'retry' : 'discard'}`,
      operator, reason, before: { seq, event: dead.event, error: dead.error }, after: { seq, resolution },
    })
    return { actorId: dead.actor_id, accountId: dead.account_id, seq, event: dead.event, resolution, dedupeKey }
  })
}

/** An open dead letter's event and its actor's kind (undefined when there is none, or it was resolved). */
export async function openDeadLetter(pool: pg.Pool, seq: number): Promise<{ kind: string; event: unknown } | undefined> {
  const { rows } = await pool.query<{ kind: string; event: unknown }>(
    `select a.kind, i.event from actor_inbox i join actor a on a.id = i.actor_id
      where i.seq = $1 and i.dead_at is not null and i.resolved_at is null`,
    [seq],
  )
  return rows[0]
}

/**
 * Clears an actor's stuck mark once an operator understood its cause, audited with the mark it
 * had. Undefined when the actor is not stuck (or does not exist).
 *
 * @example
 * await clearStuck(pool, { actorId, operator, reason: 'snapshot migrated by hand' })
 */
export async function clearStuck(
  pool: pg.Pool,
  { actorId, operator, reason }: { actorId: string; operator: OpsOperator; reason: string },
): Promise<{ actorId: string; stuckReason: string } | undefined> {
  return withTransaction(pool, async (tx) => {
    const { rows } = await tx.query<{ account_id: string; stuck_reason: string | null; stuck_at: Date | string }>(
      `with old as (select account_id, stuck_reason, stuck_at from actor where id = $1 and stuck_at is not null for update)
       update actor a set stuck_reason = null, stuck_at = null from old where a.id = $1
       returning old.account_id, old.stuck_reason, old.stuck_at`,
      [actorId],
    )
    const row = rows[0]
    if (!row) return undefined
    await writeOpsAudit(tx, {
      accountId: row.account_id, subjectId: actorId, action: 'ops.actor.unstick', operator, reason,
      before: { stuckReason: row.stuck_reason, stuckAt: new Date(row.stuck_at).toISOString() }, after: { stuck: false },
    })
    return { actorId, stuckReason: row.stuck_reason ?? '' }
  })
}

/** The account that owns an actor (its agent, run...), or undefined. */
export async function actorOwner(pool: pg.Pool, id: string, kind?: string): Promise<{ accountId: string; status: string } | undefined> {
  const { rows } = await pool.query<{ account_id: string; status: string }>(
    `select account_id, status from actor where id = $1 ${kind ? 'and kind = $2' : ''}`,
    kind ? [id, kind] : [id],
  )
  return rows[0] && { accountId: rows[0].account_id, status: rows[0].status }
}

/**
 * Marks a launched token verified or not and journals it (`token.verify` / `token.unverify`, by
 * the operator) in one statement; undefined when no token has that address.
 *
 * @example
 * const token = await setTokenVerified(pool, { address, verified: true, accountId, actor })
 */
export async function setTokenVerified(
  pool: pg.Pool,
  p: { address: string; verified: boolean; accountId: string; actor: unknown },
): Promise<{ address: string; symbol: string; verified: boolean } | undefined> {
  const { rows } = await pool.query<{ address: string; symbol: string; verified: boolean }>(
    `with upd as (update token set verified = $2 where address = $1 returning address, symbol, verified),
          audit as (insert into audit_log (account_id, subject_id, action, data, actor, after, effective_at)
                    select $3, address, case when $2 then 'token.verify' else 'token.unverify' end, '{}'::jsonb, $4::jsonb,
                           jsonb_build_object('verified', verified), now() from upd)
     select * from upd`,
    [p.address.toLowerCase(), p.verified, p.accountId, JSON.stringify(p.actor)],
  )
  return rows[0]
}

import type pg from 'pg'
import type { Queryable } from '../../domain/billing/ports.ts'
import type { OpsAuditEntry } from '../../domain/ops/ports.ts'

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

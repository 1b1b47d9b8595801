import type pg from 'pg'
import type { Queryable } from '../../domain/billing/ports.ts'
import { ValidationError } from '../../domain/errors.ts'
import type { AuditActor, AuditEntry, AuditPage, AuditView } from '../../domain/agents/auditTrail.ts'

/**
 * The audit trail (`audit_log`): every change of a policy, payout wallet, whitelist, verified
 * token or operator action, with its actor, before, after and effective time.
 */

/**
 * Journals one change; `effective_at` is the database clock plus the hold.
 *
 * @example
 * await writeAudit(client, { accountId, subjectId: agentId, action: 'policy.change', actor, before, after, effectiveAfterSeconds: 0 })
 */
export async function writeAudit(db: Queryable, e: AuditEntry): Promise<void> {
  await db.query(
    `insert into audit_log (account_id, subject_id, action, data, actor, before, after, effective_at)
     values ($1, $2, $3, '{}'::jsonb, $4::jsonb, $5::jsonb, $6::jsonb, now() + $7 * interval '1 second')`,
    [e.accountId, e.subjectId, e.action, JSON.stringify(e.actor), JSON.stringify(e.before ?? null), JSON.stringify(e.after ?? null), e.effectiveAfterSeconds],
  )
}

type AuditRow = {
  id: string
  account_id: string
  subject_id: string
  action: string
  data: Record<string, unknown>
  actor: AuditActor | null
  before: unknown
  after: unknown
  at: Date | string
  effective_at: Date | string | null
}

const auditView = (r: AuditRow): AuditView => ({
  id: r.id,
  accountId: r.account_id,
  subjectId: r.subject_id,
  action: r.action,
  actor: r.actor,
  before: r.before ?? null,
  // Entries written before the trail kept before/after carry their details in `data`.
  after: r.after ?? (Object.keys(r.data ?? {}).length > 0 ? r.data : null),
  at: new Date(r.at).toISOString(),
  effectiveAt: new Date(r.effective_at ?? r.at).toISOString(),
})

const decode = (cursor: string | undefined) => {
  if (cursor === undefined) return undefined
  const id = Buffer.from(cursor, 'base64url').toString()
  if (!/^[1-9]\d{0,17}$/.test(id)) throw new ValidationError({ cursor: 'Invalid cursor.' })
  return id
}

/**
 * The audit trail, newest first, paged by an opaque cursor; filtered by account and/or subject.
 *
 * @example
 * const { entries, nextCursor } = await listAudit(pool, { accountId, subjectId: agentId, limit: 20 })
 */
export async function listAudit(
  pool: pg.Pool,
  q: { accountId?: string | undefined; subjectId?: string | undefined; limit: number; cursor?: string | undefined },
): Promise<AuditPage> {
  const params: unknown[] = [q.limit + 1]
  const where: string[] = []
  if (q.accountId) where.push(`account_id = $${params.push(q.accountId)}::uuid`)
  if (q.subjectId) where.push(`subject_id = $${params.push(q.subjectId)}`)
  const before = decode(q.cursor)
  if (before) where.push(`id < $${params.push(before)}::bigint`)
  const { rows } = await pool.query<AuditRow>(
    `select id::text, account_id, subject_id, action, data, actor, before, after, at, effective_at from audit_log
      ${where.length ? `where ${where.join(' and ')}` : ''} order by id desc limit $1`,
    params,
  )
  const page = rows.slice(0, q.limit)
  const last = page.at(-1)
  return { entries: page.map(auditView), nextCursor: rows.length > q.limit && last ? Buffer.from(last.id).toString('base64url') : null }
}

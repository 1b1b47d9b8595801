import type { Queryable } from '../../domain/billing/ports.ts'
import { DEFAULT_POLICY, type Policy } from '../../domain/agents/policy.ts'
import { planGuardrailChange, type GuardrailPatch } from '../../domain/agents/guardrailChange.ts'
import type { AuditActor } from '../../domain/agents/auditTrail.ts'
import { writeAudit } from './auditTrail.store.ts'
import { NotFoundError } from '../../domain/errors.ts'

export type ApplyGuardrailChangeParams = {
  agentId: string
  accountId: string
  actor: AuditActor
  patch: GuardrailPatch
  /** WHITELIST_HOLD_SECONDS: how long a loosening waits. */
  holdSeconds: number
}

const splitPayout = (values: Record<string, unknown>) => {
  const { payout_wallet, ...policy } = values
  return { policy: policy as Partial<Policy>, payout: 'payout_wallet' in values ? { value: payout_wallet as string | null } : undefined }
}

/**
 * Stores a change of an agent's policy and/or payout wallet inside the caller's transaction:
 * folds the matured pending changes into the row (locking it), applies what tightens at once,
 * stores what loosens as pending for the hold (replacing any earlier pending change of the same
 * field), and journals every part with its actor, before, after and effective time.
 * NotFoundError when the agent is not (or no longer) the account's.
 *
 * @example
 * await withTransaction(pool, (db) => applyGuardrailChange(db, { agentId, accountId, actor, patch, holdSeconds: 86_400 }))
 */
export async function applyGuardrailChange(db: Queryable, p: ApplyGuardrailChangeParams): Promise<void> {
  const { rows } = await db.query<{ policy: Partial<Policy>; payout_wallet: string | null }>(
    `with matured as (delete from agent_pending_change where agent_id = $1 and effective_at <= now() returning field, value)
     update agent a set
       policy = a.policy || coalesce((select jsonb_object_agg(field, value) from matured where field <> 'payout_wallet'), '{}'::jsonb),
       payout_wallet = coalesce((select value #>> '{}' from matured where field = 'payout_wallet'), a.payout_wallet)
     where a.id = $1 and a.account_id = $2
     returning a.policy, a.payout_wallet`,
    [p.agentId, p.accountId],
  )
  // No row: the agent is no longer this account's (sold since the caller read it).
  const row = rows[0]
  if (!row) throw new NotFoundError('Agent')
  const plan = planGuardrailChange({ policy: { ...DEFAULT_POLICY, ...row.policy }, payout_wallet: row.payout_wallet }, p.patch)
  // The latest request for a field wins: an earlier pending loosening of it never lands after it.
  const dropped = await db.query<{ field: string; value: unknown }>(
    'delete from agent_pending_change where agent_id = $1 and field = any($2::text[]) returning field, value',
    [p.agentId, plan.named],
  )
  const held = p.holdSeconds > 0 ? plan.held : {}
  const now = splitPayout(p.holdSeconds > 0 ? plan.now : { ...plan.now, ...plan.held })
  if (Object.keys(now.policy).length > 0 || now.payout) {
    await db.query(
      `update agent set policy = policy || $2::jsonb, payout_wallet = case when $3 then $4 else payout_wallet end where id = $1`,
      [p.agentId, JSON.stringify(now.policy), now.payout !== undefined, now.payout?.value ?? null],
    )
  }
  for (const [field, value] of Object.entries(held)) {
    await db.query(
      `insert into agent_pending_change (agent_id, field, value, effective_at) values ($1, $2, $3::jsonb, now() + $4 * interval '1 second')`,
      [p.agentId, field, JSON.stringify(value), p.holdSeconds],
    )
  }
  const base = { accountId: p.accountId, subjectId: p.agentId, actor: p.actor }
  const cancelled = dropped.rows.filter((r) => !(r.field in held))
  if (cancelled.length > 0) {
    const before = Object.fromEntries(cancelled.map((r) => [r.field, r.value]))
    await writeAudit(db, { ...base, action: 'pending.cancel', before, after: null, effectiveAfterSeconds: 0 })
  }
  for (const part of plan.audit) {
    const effectiveAfterSeconds = part.timing === 'held' ? p.holdSeconds : 0
    await writeAudit(db, { ...base, action: part.action, before: part.before, after: part.after, effectiveAfterSeconds })
  }
}

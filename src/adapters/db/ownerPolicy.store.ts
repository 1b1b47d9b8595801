import type pg from 'pg'
import { NotFoundError } from '../../domain/errors.ts'
import { EMPTY_OWNER_POLICY, ownerPolicySchema, type OwnerPolicy, type PolicyInitiator } from '../../domain/policies/ownerPolicy.schema.ts'
import { planOwnerPolicyChange } from '../../domain/policies/policyChange.ts'
import type { ScopedPolicy } from '../../domain/policies/ownerPolicyRules.ts'
import type { OwnerPolicyStore, PolicyTarget, StoredOwnerPolicy } from '../../domain/policies/ports.ts'
import type { AuditActor } from '../../domain/agents/auditTrail.ts'
import { withTransaction } from './transaction.ts'
import type { Queryable } from '../../domain/billing/ports.ts'
import { writeAudit } from './auditTrail.store.ts'
import { actorRowsSql } from '../../actors/runtime/index.ts'

/**
 * The owners' policies (`account_policy`, `agent_owner_policy`): one row per account or agent,
 * the policy in effect and a loosening held until `pending_effective_at` (applying then by the
 * database clock, as an agent's guardrails do: effectiveGuardrails.sql.ts). Stored policies were
 * validated when written; they are parsed again when read, so a row is never trusted blindly.
 */
type Row = { policy: unknown; pending: unknown; pending_effective_at: Date | string | null; matured: boolean | null; updated_at: Date | string | null }

/** The rows of a target: the table, its key column and the key. */
const tableOf = (t: PolicyTarget) =>
  t.scope === 'account' ? { table: 'account_policy', key: 'account_id', id: t.accountId } : { table: 'agent_owner_policy', key: 'agent_id', id: t.agentId }

const parsed = (value: unknown): OwnerPolicy => (value ? ownerPolicySchema.parse(value) : EMPTY_OWNER_POLICY)
const iso = (v: Date | string | null) => (v === null ? null : new Date(v).toISOString())

/** The stored row as it applies now: a matured pending change is the policy. */
function storedOf(row: Row | undefined): StoredOwnerPolicy {
  if (!row) return { policy: EMPTY_OWNER_POLICY, pending: null, updatedAt: null }
  if (row.pending && row.matured) return { policy: parsed(row.pending), pending: null, updatedAt: iso(row.pending_effective_at) }
  return {
    policy: parsed(row.policy),
    pending: row.pending ? { policy: parsed(row.pending), effectiveAt: iso(row.pending_effective_at)! } : null,
    updatedAt: iso(row.updated_at),
  }
}

const SELECT = `p.policy, p.pending, p.pending_effective_at, p.pending_effective_at <= now() as matured, p.updated_at`

/** 404 unless the agent is the account's (a deleted agent's policy can still be read and set). */
async function assertTarget(db: Pick<pg.Pool, 'query'>, t: PolicyTarget) {
  if (t.scope === 'account') return
  const { rowCount } = await db.query('select 1 from agent where id = $1 and account_id = $2', [t.agentId, t.accountId])
  if (!rowCount) throw new NotFoundError('Agent')
}

async function readRow(db: Pick<pg.Pool, 'query'>, t: PolicyTarget, lock: boolean): Promise<Row | undefined> {
  const { table, key, id } = tableOf(t)
  const { rows } = await db.query<Row>(`select ${SELECT} from ${table} p where p.${key} = $1${lock ? ' for update' : ''}`, [id])
  return rows[0]
}

async function apply(pool: pg.Pool, input: { target: PolicyTarget; actor: AuditActor; policy: OwnerPolicy; holdSeconds: number }): Promise<StoredOwnerPolicy> {
  const { target, actor, holdSeconds } = input
  const { table, key, id } = tableOf(target)
  await withTransaction(pool, async (db) => {
    await assertTarget(db, target)
    await db.query(`insert into ${table} (${key}, policy) values ($1, '{"rules":[]}'::jsonb) on conflict (${key}) do nothing`, [id])
    const current = storedOf(await readRow(db, target, true))
    const plan = planOwnerPolicyChange(current.policy, input.policy)
    const held = holdSeconds > 0 ? plan.held : null
    const now = holdSeconds > 0 ? plan.now : (plan.held ?? plan.now)
    const applied = now ?? current.policy
    // The latest request wins: an earlier held loosening is replaced or dropped.
    await db.query(
      `update ${table} set policy = $2::jsonb, pending = $3::jsonb,
         pending_effective_at = case when $3::jsonb is null then null else now() + $4 * interval '1 second' end, updated_at = now()
       where ${key} = $1`,
      [id, JSON.stringify(applied), held ? JSON.stringify(held) : null, holdSeconds],
    )
    const base = { accountId: target.accountId, subjectId: id, actor }
    if (current.pending && !held) {
      await writeAudit(db, { ...base, action: 'pending.cancel', before: { owner_policy: current.pending.policy }, after: null, effectiveAfterSeconds: 0 })
    }
    if (now) await writeAudit(db, { ...base, action: 'owner_policy.change', before: { owner_policy: current.policy }, after: { owner_policy: now }, effectiveAfterSeconds: 0 })
    if (held) await writeAudit(db, { ...base, action: 'owner_policy.change', before: { owner_policy: applied }, after: { owner_policy: held }, effectiveAfterSeconds: holdSeconds })
  })
  return storedOf(await readRow(pool, target, false))
}

/**
 * The owners' policy store over the pool.
 *
 * @example
 * const policies = createOwnerPolicyStore(pool)
 * await policies.effective({ accountId, agentId }) // [{ scope: 'account', policy }, { scope: 'agent', policy }]
 */
export function createOwnerPolicyStore(pool: pg.Pool): OwnerPolicyStore {
  return {
    async read(target) {
      await assertTarget(pool, target)
      return storedOf(await readRow(pool, target, false))
    },
    apply: (input) => apply(pool, input),
    effective: (input) => effectiveOwnerPolicies(pool, input),
  }
}

const EFFECTIVE = `case when p.pending is not null and p.pending_effective_at <= now() then p.pending else p.policy end`

/**
 * The account's and the agent's policies in effect, in one statement, the account's first; an
 * empty policy is left out. Read where a money move is checked (the wallet operation's start,
 * under the agent's lock, and an approval's decision).
 */
export async function effectiveOwnerPolicies(db: Queryable, { accountId, agentId }: { accountId: string; agentId: string }): Promise<ScopedPolicy[]> {
  const { rows } = await db.query<{ account: unknown; agent: unknown }>(
    `select (select ${EFFECTIVE} from account_policy p where p.account_id = $1) as account,
            (select ${EFFECTIVE} from agent_owner_policy p where p.agent_id = $2) as agent`,
    [accountId, agentId],
  )
  const out: ScopedPolicy[] = []
  const account = parsed(rows[0]?.account)
  const agent = parsed(rows[0]?.agent)
  if (account.rules.length > 0) out.push({ scope: 'account', policy: account })
  if (agent.rules.length > 0) out.push({ scope: 'agent', policy: agent })
  return out
}

/**
 * Who started a money move, from the actor it is made for (`parentId`): none is a request with
 * a key (REST, MCP); a chat turn's model, a run's, an automation's firing, a mirror's copy.
 */
export async function initiatorOf(db: Queryable, parentId: string | null | undefined): Promise<PolicyInitiator> {
  if (!parentId) return 'api_key'
  const { rows } = await db.query<{ kind: string; automation_kind: string | null }>(
    `select p.kind, p.context->>'kind' as automation_kind from ${actorRowsSql()} p where p.id = $1`,
    [parentId],
  )
  const row = rows[0]
  if (row?.kind === 'chatturn') return 'chat'
  if (row?.kind === 'run') return 'run'
  if (row?.kind === 'automation') return row.automation_kind === 'mirror' ? 'mirror' : 'automation'
  return 'api_key'
}

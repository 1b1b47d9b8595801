import type pg from 'pg'
import { NotFoundError } from '../../domain/errors.ts'
import { effectivePayoutSql, effectivePolicySql, pendingChangesSql } from './effectiveGuardrails.sql.ts'
import type { PendingChangeRow } from '../../domain/agents/pendingChanges.ts'
import type { AgentRecord, AgentsRepository, NewAgent, WhitelistEntry } from '../../domain/agents/ports.ts'
import type { Policy } from '../../domain/agents/policy.ts'
import { isoTimestamp } from '../../domain/util/isoTimestamp.ts'
import { actorRowsSql } from '../../actors/runtime/index.ts'

type AgentRow = {
  id: string
  account_id: string
  name: string
  model: string
  skills: string[]
  system_prompt: string | null
  payout_wallet: string | null
  persona: string | null
  strategy: string | null
  temperature: number | null
  is_public: boolean
  allow_copy: boolean
  public_description: string | null
  run_interval_seconds: number
  mode: 'live' | 'paper'
  policy: Partial<Policy>
  wallet_address: `0x${string}`
  created_at: Date | string
  updated_at: Date | string
  status: string
  reason: string | null
  pending: PendingChangeRow[]
  listing_id: string | null
}

// The policy and payout wallet as they apply now (matured pending changes included), the actor's
// status, and the changes still in their hold: one statement, so a read is one round trip. The
// actor's side is the runtime's relation of actor rows (src/actors/runtime/sqlApi.ts), joined on its key.
const COLUMNS = `a.id, a.account_id, a.name, a.model, a.skills, a.system_prompt, ${effectivePayoutSql('a')} as payout_wallet, a.persona,
  a.strategy, a.temperature, a.is_public, a.allow_copy, a.public_description, a.run_interval_seconds, a.mode, ${effectivePolicySql('a')} as policy, a.wallet_address, a.created_at,
  a.updated_at, x.status, x.context->>'reason' as reason, ${pendingChangesSql('a')} as pending,
  (select l.id from listing l where l.agent_id = a.id and l.status = 'active') as listing_id`
const ACTORS = actorRowsSql()
const FROM = `from agent a join ${ACTORS} x on x.id = a.id::text`
/** The columns `updateConfig` may set: names are never taken from anywhere else. */
const CONFIG_COLUMNS = new Set(['name', 'model', 'skills', 'system_prompt', 'persona', 'strategy', 'temperature', 'is_public', 'public_description', 'run_interval_seconds', 'allow_copy'])

type WhitelistRow = { address: string; label: string | null; usable_at: Date | string; created_at: Date | string }
const whitelistEntryOf = (r: WhitelistRow): WhitelistEntry => ({ address: r.address, label: r.label, usableAt: r.usable_at, createdAt: r.created_at })

const recordOf = (r: AgentRow): AgentRecord => ({
  id: r.id,
  accountId: r.account_id,
  name: r.name,
  model: r.model,
  skills: r.skills,
  systemPrompt: r.system_prompt,
  payoutWallet: r.payout_wallet,
  persona: r.persona,
  strategy: r.strategy,
  temperature: r.temperature,
  isPublic: r.is_public,
  allowCopy: r.allow_copy,
  publicDescription: r.public_description,
  runIntervalSeconds: r.run_interval_seconds,
  mode: r.mode,
  policy: r.policy,
  walletAddress: r.wallet_address,
  createdAt: isoTimestamp(r.created_at),
  updatedAt: isoTimestamp(r.updated_at),
  cursorAt: typeof r.created_at === 'string' ? r.created_at : r.created_at.toISOString(),
  status: r.status,
  statusReason: r.reason,
  pending: r.pending,
  listingId: r.listing_id,
})

/**
 * What an agent's schedule check reads, in one statement: the agent as `findOwned` answers it,
 * when its newest scheduled run (an actor of `runKind`) was created, and its account's balance.
 * Undefined when the account has no such agent.
 */
export async function scheduleFactsOf(db: pg.Pool, runKind: string, accountId: string, agentId: string): Promise<{ agent: AgentRecord; lastRunAt: Date | null; activeRun: boolean; credits: number; reserved: number } | undefined> {
  // The run kind written into the text, not passed as a parameter: the indexes on runs are partial
  // on their kind, and a parameter there kept Postgres from a generic plan, so every call was
  // planned again (0.7-0.8 ms of Postgres's CPU, about a tenth of a scheduled run's).
  const runs = actorRowsSql({ kind: runKind })
  const { rows } = await db.query<AgentRow & { last_run_at: Date | null; active_run: boolean; acc_credits: string; acc_reserved: string }>({
    name: `agent.schedule_facts.${runKind}`,
    text: `select ${COLUMNS},
              (select max(r.created_at) from ${runs} r where r.context->>'agentId' = a.id::text
                  and r.context->>'trigger' = 'schedule') as last_run_at,
              exists (select 1 from ${runs} r where r.status in ('queued', 'running')
                  and r.context->>'agentId' = a.id::text) as active_run,
              acc.credits as acc_credits, credits_held(acc.id) as acc_reserved
           ${FROM} join account acc on acc.id = a.account_id where a.id = $1 and a.account_id = $2`,
    values: [agentId, accountId],
  })
  const r = rows[0]
  return r && { agent: recordOf(r), lastRunAt: r.last_run_at ? new Date(r.last_run_at) : null, activeRun: r.active_run, credits: Number(r.acc_credits), reserved: Number(r.acc_reserved) }
}

/**
 * The agent aggregate (the `agent` and `agent_whitelist` tables) in plain SQL on the pool, one
 * style for both tables. The agent-and-actor read joins the actor row (not an entity: the
 * runtime owns it and publishes it as a relation, `actorRowsSql`) and lays the matured pending
 * guardrail changes over the policy in the same round trip. That read is the hot path of every authenticated agent request (GET /agents/:id,
 * transfers, launches, claims, swaps). Measured with bench/experiments/agentRead.ts (2,000
 * sequential reads, one connection, on the shared 2-core machine under load): this prepared
 * statement on the pool 2.68 ms per read, the same statement through MikroORM's `em.execute`
 * 3.06 ms (+14%), `em.findOne(Agent)` plus a second query for the actor and the pending changes
 * 4.92 ms (+83%). The writes run on the caller's connection, inside the transaction that also
 * writes the agent's actor or its audit row, which the ORM cannot join; so the two small reads
 * (ownership, whitelist) are SQL too rather than a second style for the same tables.
 *
 * @example
 * const agents = createAgentsRepository({ pool: db.pool })
 * const agent = await agents.getOwned(accountId, agentId) // NotFoundError for another account's
 */
export function createAgentsRepository({ pool }: { pool: pg.Pool }): AgentsRepository {
  async function findOwned(accountId: string, agentId: string) {
    const { rows } = await pool.query<AgentRow>({
      name: 'agent.owned',
      text: `select ${COLUMNS} ${FROM} where a.id = $1 and a.account_id = $2`,
      values: [agentId, accountId],
    })
    return rows[0] && recordOf(rows[0])
  }

  return {
    findOwned,

    async getOwned(accountId, agentId) {
      const agent = await findOwned(accountId, agentId)
      if (!agent) throw new NotFoundError('Agent')
      return agent
    },

    async list(accountId, { limit, after }) {
      const params: unknown[] = [accountId, limit]
      const cond = after ? `and (a.created_at, a.id) < ($${params.push(after.createdAt)}::timestamptz, $${params.push(after.id)}::uuid)` : ''
      const { rows } = await pool.query<AgentRow>(
        `select ${COLUMNS} ${FROM} where a.account_id = $1 ${cond} order by a.created_at desc, a.id desc limit $2`,
        params,
      )
      return rows.map(recordOf)
    },

    async insert(a: NewAgent, tx) {
      // On the caller's connection, inside its transaction: the agent's actor is created in the same one.
      await tx.query(
        `insert into agent (id, account_id, name, model, skills, system_prompt, payout_wallet, persona, strategy,
           temperature, is_public, public_description, policy, wallet_address, wallet_key_encrypted, run_interval_seconds, mode)
         values ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17)`,
        [
          a.id, a.accountId, a.name, a.model, a.skills, a.systemPrompt, a.payoutWallet, a.persona, a.strategy,
          a.temperature, a.isPublic, a.publicDescription, JSON.stringify(a.policy), a.walletAddress, a.walletKeyEncrypted,
          a.runIntervalSeconds, a.mode,
        ],
      )
    },

    async whitelist(agentId): Promise<WhitelistEntry[]> {
      const { rows } = await pool.query<WhitelistRow>({
        name: 'agent.whitelist',
        text: 'select address, label, usable_at, created_at from agent_whitelist where agent_id = $1 order by created_at asc, address asc',
        values: [agentId],
      })
      return rows.map(whitelistEntryOf)
    },

    // The write and its audit row in one statement (one round trip, one snapshot), only while the
    // agent is still the caller's: `owner` takes a share lock on the agent row, so a write that
    // read the agent before a sale waits for the sale's commit and then finds it gone (a sale
    // locks the row for update before it clears the whitelist).
    async addToWhitelist({ agentId, accountId, address, label, holdSeconds, actor }) {
      const { rows } = await pool.query<WhitelistRow>(
        `with owner as (
           select id from agent where id = $1 and account_id = $2 for share
         ), ins as (
           insert into agent_whitelist (agent_id, account_id, address, label, usable_at)
           select $1, $2, $3, $4, now() + $5 * interval '1 second' from owner
           on conflict (agent_id, address) do update set label = coalesce(excluded.label, agent_whitelist.label)
           returning address, label, usable_at, created_at
         ), audit as (
           insert into audit_log (account_id, subject_id, action, data, actor, before, after, effective_at)
           select $2, $1::text, 'whitelist.add', '{}'::jsonb, $6::jsonb, null,
                  jsonb_build_object('address', address, 'label', label, 'usable_at', usable_at), usable_at from ins
         )
         select * from ins`,
        [agentId, accountId, address, label, holdSeconds, JSON.stringify(actor)],
      )
      return rows[0] && whitelistEntryOf(rows[0])
    },

    async removeFromWhitelist({ agentId, accountId, address, actor }) {
      const { rows } = await pool.query<WhitelistRow>(
        `with owner as (
           select id from agent where id = $1 and account_id = $3 for share
         ), del as (
           delete from agent_whitelist where agent_id = $1 and address = $2 and exists (select 1 from owner)
           returning address, label, usable_at, created_at
         ), audit as (
           insert into audit_log (account_id, subject_id, action, data, actor, before, after, effective_at)
           select $3, $1::text, 'whitelist.remove', '{}'::jsonb, $4::jsonb,
                  jsonb_build_object('address', address, 'label', label, 'usable_at', usable_at), null, now() from del
         )
         select * from del`,
        [agentId, address, accountId, JSON.stringify(actor)],
      )
      return rows[0] && whitelistEntryOf(rows[0])
    },

    async updateConfig({ accountId, agentId, set }, tx) {
      const params: unknown[] = [agentId, accountId]
      const sets = Object.entries(set)
        .filter(([column, value]) => CONFIG_COLUMNS.has(column) && value !== undefined)
        .map(([column, value]) => `${column} = $${params.push(value)}`)
      // Guarded by the actor's status in the same statement, so an update never lands on a deleted
      // agent; it also locks the row, so concurrent updates apply one after the other.
      const { rowCount } = await tx.query(
        `update agent set ${[...sets, 'updated_at = now()'].join(', ')}
          where id = $1 and account_id = $2
            and exists (select 1 from ${ACTORS} x where x.id = $1::text and x.status <> 'deleted')`,
        params,
      )
      return !!rowCount
    },

    async assertOwned(accountId, agentId) {
      // Every agent row has its actor (both are created in one transaction), so the agent row alone answers.
      const { rowCount } = await pool.query({ name: 'agent.assertOwned', text: 'select 1 from agent where id = $1 and account_id = $2', values: [agentId, accountId] })
      if (!rowCount) throw new NotFoundError('Agent')
    },
  }
}

import { randomUUID } from 'node:crypto'
import type pg from 'pg'
import type { ActorRuntime } from '../../actors/actorRuntime.ts'
import { NotFoundError, InvalidStateError } from '../errors.ts'
import type { AgentCreateBody, AgentUpdateBody } from './agent.schema.ts'
import { DEFAULT_POLICY, policySchema, policyView, type Policy } from './policy.ts'
import { withTransaction } from '../../db/transaction.ts'
import { effectivePayoutSql, effectivePolicySql, pendingChangesSql, pendingChangesView, type PendingChangeRow } from './effectiveGuardrails.ts'
import { resolvePolicyTokens, type ResolveVerifiedSymbol } from './resolvePolicyTokens.ts'
import { applyGuardrailChange } from './applyGuardrailChange.ts'
import { listAudit, type AuditActor } from './auditTrail.ts'

export type AgentWallet = { address: string; encryptedKey: string }

export type AgentsDeps = {
  pool: pg.Pool
  runtime: ActorRuntime
  /** Makes a custodial wallet for a new agent; the key is encrypted bound to the agent id. */
  createWallet(agentId: string): AgentWallet
  tickMs: number
  /** The hold before a new whitelist address, or any loosening of the policy or payout wallet, takes effect. */
  whitelistHoldSeconds: number
  /** Resolves a token-list symbol to a verified token (absent without a chain: lists then take addresses only). */
  resolveVerifiedSymbol?: ResolveVerifiedSymbol | undefined
  /** How long an agent's configuration may be served from memory (writes on this node drop it at once). */
  rowCacheMs?: number
}

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
  public_description: string | null
  policy: Policy
  wallet_address: string
  created_at: Date | string
  updated_at: Date | string
  status: string
  snapshot: { context?: { reason?: string | null } }
  /** Policy and payout-wallet changes still in their hold. */
  pending: PendingChangeRow[]
}

/** Timestamps arrive as Date or, through MikroORM's pool type parsers, as strings (ISO ones pass through). */
const iso = (v: Date | string) => (typeof v === 'string' && ISO_UTC.test(v) ? v : new Date(v).toISOString())
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

// The policy and payout wallet as they apply now (matured pending changes included).
const COLUMNS = `a.id, a.account_id, a.name, a.model, a.skills, a.system_prompt, ${effectivePayoutSql('a')} as payout_wallet, a.persona,
  a.strategy, a.temperature, a.is_public, a.public_description, ${effectivePolicySql('a')} as policy, a.wallet_address, a.created_at,
  a.updated_at, x.status, x.snapshot, ${pendingChangesSql('a')} as pending`

/**
 * The agent resource as the API shows it: camelCase, as every response is (request bodies stay
 * snake_case). The one place that shapes an agent for a response; never the wallet key.
 */
export function agentView(row: AgentRow, live?: { status: string; reason: string | null }) {
  return {
    id: row.id,
    name: row.name,
    model: row.model,
    skills: row.skills,
    systemPrompt: row.system_prompt,
    payoutWallet: row.payout_wallet,
    persona: row.persona,
    strategy: row.strategy,
    temperature: row.temperature,
    isPublic: row.is_public,
    publicDescription: row.public_description,
    policy: policyView({ ...DEFAULT_POLICY, ...row.policy }),
    walletAddress: row.wallet_address,
    status: live?.status ?? row.status,
    statusReason: live ? live.reason : (row.snapshot?.context?.reason ?? null),
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
    // Loosening changes of the policy or payout wallet that wait for their hold, soonest first.
    pendingChanges: pendingChangesView(row.pending),
  }
}
export type AgentView = ReturnType<typeof agentView>

export type AgentsService = ReturnType<typeof createAgentsService>

/**
 * Agents: a row of configuration plus an agent actor that owns the status. Every query is
 * scoped by account; another account's agent is "not found".
 *
 * @example
 * const agents = createAgentsService({ pool, runtime, createWallet, tickMs: 60_000, whitelistHoldSeconds: 0 })
 * const agent = await agents.create(accountId, { name: 'a', model: 'gpt-4o-mini', skills: ['trading'] })
 * await agents.command(accountId, agent.id, 'agent.start')
 */
export function createAgentsService(deps: AgentsDeps) {
  const { pool, runtime } = deps

  const rowCacheMs = deps.rowCacheMs ?? 2000
  /** Agent rows by id, for reads; the status is always taken from the actor, never from here. */
  const rowCache = new Map<string, { row: AgentRow; at: number }>()
  const ROW_CACHE_MAX = 10_000

  /** The agent row for a read: from memory when fresh, with the live status of its actor. */
  async function readRow(accountId: string, id: string): Promise<{ row: AgentRow; status: string; reason: string | null }> {
    const hit = rowCache.get(id)
    const r = hit && Date.now() - hit.at < rowCacheMs ? hit.row : await row(accountId, id)
    if (r.account_id !== accountId) throw new NotFoundError('Agent')
    if (!hit || hit.row !== r) {
      rowCache.delete(id)
      rowCache.set(id, { row: r, at: Date.now() })
      if (rowCache.size > ROW_CACHE_MAX) rowCache.delete(rowCache.keys().next().value!)
    }
    const entry = await runtime.get(id)
    const reason = (entry?.snapshot.context as { reason?: string | null } | undefined)?.reason ?? null
    return { row: r, status: entry?.status ?? r.status, reason }
  }

  async function row(accountId: string, id: string): Promise<AgentRow> {
    const { rows } = await pool.query<AgentRow>({
      name: 'agent.row',
      text: `select ${COLUMNS} from agent a join actor x on x.id = a.id::text where a.id = $1 and a.account_id = $2`,
      values: [id, accountId],
    })
    const r = rows[0]
    if (!r) throw new NotFoundError('Agent')
    // Normalised once here, so a cached row's reads skip parsing dates.
    return { ...r, created_at: iso(r.created_at), updated_at: iso(r.updated_at) }
  }

  return {
    async create(accountId: string, body: AgentCreateBody): Promise<AgentView> {
      const id = randomUUID()
      const wallet = deps.createWallet(id)
      const policy = policySchema.parse({ ...DEFAULT_POLICY, ...(await resolvePolicyTokens(body.policy, deps.resolveVerifiedSymbol)) })
      const entry = await withTransaction(pool, async (client) => {
        await client.query(
          `insert into agent (id, account_id, name, model, skills, system_prompt, payout_wallet, persona, strategy,
             temperature, is_public, public_description, policy, wallet_address, wallet_key_encrypted)
           values ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15)`,
          [
            id, accountId, body.name, body.model, body.skills, body.system_prompt ?? null, body.payout_wallet ?? null,
            body.persona ?? null, body.strategy ?? null, body.temperature ?? null, body.is_public ?? false,
            body.public_description ?? null, JSON.stringify(policy), wallet.address, wallet.encryptedKey,
          ],
        )
        return runtime.create('agent', { id, accountId, input: { agentId: id, accountId, tickMs: deps.tickMs } }, client)
      })
      runtime.afterExternalCommit(entry)
      return agentView(await row(accountId, id))
    },

    async list(accountId: string, { limit, after }: { limit: number; after?: { createdAt: string; id: string } | undefined }) {
      const params: unknown[] = [accountId, limit + 1]
      let cond = ''
      if (after) {
        params.push(after.createdAt, after.id)
        cond = 'and (a.created_at, a.id) < ($3::timestamptz, $4::uuid)'
      }
      const { rows } = await pool.query<AgentRow>(
        `select ${COLUMNS} from agent a join actor x on x.id = a.id::text
          where a.account_id = $1 ${cond} order by a.created_at desc, a.id desc limit $2`,
        params,
      )
      return { agents: rows.slice(0, limit).map((r) => agentView(r)), last: rows.length > limit ? rows[limit - 1] : undefined }
    },

    async get(accountId: string, id: string): Promise<AgentView> {
      const { row: r, status, reason } = await readRow(accountId, id)
      return agentView(r, { status, reason })
    },

    /**
     * Updates an agent. A change of its policy or payout wallet (the route requires the admin
     * scope for it) tightens at once and loosens after the hold, and is journaled with `actor`.
     */
    async update(accountId: string, id: string, patch: AgentUpdateBody, actor: AuditActor): Promise<AgentView> {
      rowCache.delete(id)
      const current = await row(accountId, id)
      if (current.status === 'deleted') throw new InvalidStateError({ event: 'update', state: 'deleted' })
      const policy = await resolvePolicyTokens(patch.policy, deps.resolveVerifiedSymbol)
      const sets: string[] = []
      const params: unknown[] = [id, accountId]
      const put = (column: string, value: unknown) => {
        params.push(value)
        sets.push(`${column} = $${params.length}`)
      }
      const columns = ['name', 'model', 'skills', 'system_prompt', 'persona', 'strategy', 'temperature', 'is_public', 'public_description'] as const
      for (const c of columns) if (patch[c] !== undefined) put(c, patch[c])
      const guarded = policy || patch.payout_wallet !== undefined
      if (sets.length === 0 && !guarded) return agentView(current)
      await withTransaction(pool, async (client) => {
        // Guarded by the actor's status in the same statement, so an update never lands on a deleted
        // agent; it also locks the row, so concurrent updates apply one after the other.
        const { rowCount } = await client.query(
          `update agent set ${[...sets, 'updated_at = now()'].join(', ')}
            where id = $1 and account_id = $2
              and exists (select 1 from actor where id = $1::text and status <> 'deleted')`,
          params,
        )
        if (!rowCount) throw new InvalidStateError({ event: 'update', state: 'deleted' })
        if (guarded) {
          const change = { policy, payout_wallet: patch.payout_wallet }
          await applyGuardrailChange(client, { agentId: id, accountId, actor, patch: change, holdSeconds: deps.whitelistHoldSeconds })
        }
      })
      rowCache.delete(id)
      return agentView(await row(accountId, id))
    },

    /** The agent's audit trail (policy, payout wallet and whitelist changes), newest first. */
    async audit(accountId: string, id: string, page: { limit: number; cursor?: string | undefined }) {
      await row(accountId, id)
      return listAudit(pool, { accountId, subjectId: id, ...page })
    },

    /** Sends a lifecycle command to the agent's actor; answers once the new state is committed. */
    async command(accountId: string, id: string, type: 'agent.start' | 'agent.stop' | 'agent.delete'): Promise<AgentView> {
      const entry = await runtime.get(id)
      if (!entry || entry.kind.kind !== 'agent' || entry.accountId !== accountId) throw new NotFoundError('Agent')
      const next = await runtime.send(id, { type })
      const reason = (next.snapshot.context as { reason?: string | null }).reason ?? null
      // A command changes the status (from the actor), not the configuration: no second read.
      const { row: config } = await readRow(accountId, id)
      return agentView(config, { status: next.status, reason })
    },

    async whitelist(accountId: string, agentId: string) {
      await row(accountId, agentId)
      const { rows } = await pool.query<{ address: string; label: string | null; usable_at: Date | string; created_at: Date | string }>(
        `select address, label, usable_at, created_at from agent_whitelist where agent_id = $1 order by created_at, address`,
        [agentId],
      )
      return rows.map(whitelistView)
    },

    async addToWhitelist(accountId: string, agentId: string, { address, label }: { address: string; label?: string | undefined }, actor: AuditActor) {
      const agent = await row(accountId, agentId)
      if (agent.status === 'deleted') throw new InvalidStateError({ event: 'change the whitelist', state: 'deleted' })
      const { rows } = await pool.query<{ address: string; label: string | null; usable_at: Date | string; created_at: Date | string }>(
        `with ins as (
           insert into agent_whitelist (agent_id, account_id, address, label, usable_at)
           values ($1, $2, $3, $4, now() + $5 * interval '1 second')
           on conflict (agent_id, address) do update set label = coalesce(excluded.label, agent_whitelist.label)
           returning address, label, usable_at, created_at
         ), audit as (
           insert into audit_log (account_id, subject_id, action, data, actor, before, after, effective_at)
           select $2, $1::text, 'whitelist.add', '{}'::jsonb, $6::jsonb, null,
                  jsonb_build_object('address', address, 'label', label, 'usable_at', usable_at), usable_at from ins
         )
         select * from ins`,
        [agentId, accountId, address, label ?? null, deps.whitelistHoldSeconds, JSON.stringify(actor)],
      )
      return whitelistView(rows[0]!)
    },

    async removeFromWhitelist(accountId: string, agentId: string, address: string, actor: AuditActor) {
      await row(accountId, agentId)
      const { rows } = await pool.query<{ address: string; label: string | null; usable_at: Date | string; created_at: Date | string }>(
        `with del as (
           delete from agent_whitelist where agent_id = $1 and address = $2
           returning address, label, usable_at, created_at
         ), audit as (
           insert into audit_log (account_id, subject_id, action, data, actor, before, after, effective_at)
           select $3, $1::text, 'whitelist.remove', '{}'::jsonb, $4::jsonb,
                  jsonb_build_object('address', address, 'label', label, 'usable_at', usable_at), null, now() from del
         )
         select * from del`,
        [agentId, address, accountId, JSON.stringify(actor)],
      )
      if (!rows[0]) throw new NotFoundError('Whitelist entry')
      return whitelistView(rows[0])
    },
  }
}

/** A whitelist entry as the API shows it (camelCase). */
function whitelistView(r: { address: string; label: string | null; usable_at: Date | string; created_at: Date | string }) {
  return {
    address: r.address,
    label: r.label,
    usableAt: iso(r.usable_at),
    usable: new Date(r.usable_at).getTime() <= Date.now(),
    createdAt: iso(r.created_at),
  }
}

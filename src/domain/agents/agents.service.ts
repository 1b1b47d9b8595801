import { randomUUID } from 'node:crypto'
import type pg from 'pg'
import type { ActorRuntime } from '../../actors/actorRuntime.ts'
import { NotFoundError, InvalidStateError } from '../errors.ts'
import type { AgentCreateBody, AgentUpdateBody } from './agent.schema.ts'
import { DEFAULT_POLICY, policySchema, policyView } from './policy.ts'
import { pendingChangesView } from './effectiveGuardrails.ts'
import { resolvePolicyTokens, type ResolveVerifiedSymbol } from './resolvePolicyTokens.ts'
import { applyGuardrailChange } from './applyGuardrailChange.ts'
import { listAudit, type AuditActor } from './auditTrail.ts'
import type { AgentRecord, AgentsRepository, WhitelistEntry, WithTransaction } from './ports.ts'
import { isoTimestamp as iso } from '../util/isoTimestamp.ts'

export type AgentWallet = { address: string; encryptedKey: string }

export type AgentsDeps = {
  pool: pg.Pool
  /** The agent aggregate's storage (src/db/agents.repository.ts). */
  repository: AgentsRepository
  /** Runs statements in one transaction (src/db/transaction.ts, handed in). */
  withTransaction: WithTransaction
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

/**
 * The agent resource as the API shows it: camelCase, as every response is (request bodies stay
 * snake_case). The one place that shapes an agent for a response; never the wallet key.
 */
export function agentView(agent: AgentRecord, live?: { status: string; reason: string | null }) {
  return {
    id: agent.id,
    name: agent.name,
    model: agent.model,
    skills: agent.skills,
    systemPrompt: agent.systemPrompt,
    payoutWallet: agent.payoutWallet,
    persona: agent.persona,
    strategy: agent.strategy,
    temperature: agent.temperature,
    isPublic: agent.isPublic,
    publicDescription: agent.publicDescription,
    runIntervalSeconds: agent.runIntervalSeconds,
    policy: policyView({ ...DEFAULT_POLICY, ...agent.policy }),
    walletAddress: agent.walletAddress,
    status: live?.status ?? agent.status,
    statusReason: live ? live.reason : agent.statusReason,
    createdAt: agent.createdAt,
    updatedAt: agent.updatedAt,
    // Loosening changes of the policy or payout wallet that wait for their hold, soonest first.
    pendingChanges: pendingChangesView(agent.pending),
  }
}
export type AgentView = ReturnType<typeof agentView>

export type AgentsService = ReturnType<typeof createAgentsService>

/** A new agent's body; `run_interval_seconds` may be left out by callers other than the route (0 then). */
export type AgentCreateInput = Omit<AgentCreateBody, 'run_interval_seconds'> & { run_interval_seconds?: number }

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
  const { pool, runtime, repository: repo, withTransaction } = deps

  const rowCacheMs = deps.rowCacheMs ?? 2000
  /** Agent rows by id, for reads; the status is always taken from the actor, never from here. */
  const rowCache = new Map<string, { row: AgentRecord; at: number }>()
  const ROW_CACHE_MAX = 10_000

  /** The agent row for a read: from memory when fresh, with the live status of its actor. */
  async function readRow(accountId: string, id: string): Promise<{ row: AgentRecord; status: string; reason: string | null }> {
    const hit = rowCache.get(id)
    const r = hit && Date.now() - hit.at < rowCacheMs ? hit.row : await row(accountId, id)
    if (r.accountId !== accountId) throw new NotFoundError('Agent')
    if (!hit || hit.row !== r) {
      rowCache.delete(id)
      rowCache.set(id, { row: r, at: Date.now() })
      if (rowCache.size > ROW_CACHE_MAX) rowCache.delete(rowCache.keys().next().value!)
    }
    const entry = await runtime.get(id)
    const reason = (entry?.snapshot.context as { reason?: string | null } | undefined)?.reason ?? null
    return { row: r, status: entry?.status ?? r.status, reason }
  }

  const row = (accountId: string, id: string) => repo.getOwned(accountId, id)

  return {
    async create(accountId: string, body: AgentCreateInput): Promise<AgentView> {
      const id = randomUUID()
      const wallet = deps.createWallet(id)
      const policy = policySchema.parse({ ...DEFAULT_POLICY, ...(await resolvePolicyTokens(body.policy, deps.resolveVerifiedSymbol)) })
      const entry = await withTransaction(async (client) => {
        await repo.insert(
          {
            id, accountId, name: body.name, model: body.model, skills: body.skills, systemPrompt: body.system_prompt ?? null,
            payoutWallet: body.payout_wallet ?? null, persona: body.persona ?? null, strategy: body.strategy ?? null,
            temperature: body.temperature ?? null, isPublic: body.is_public ?? false, publicDescription: body.public_description ?? null,
            policy, walletAddress: wallet.address, walletKeyEncrypted: wallet.encryptedKey, runIntervalSeconds: body.run_interval_seconds ?? 0,
          },
          client,
        )
        return runtime.create('agent', { id, accountId, input: { agentId: id, accountId, tickMs: deps.tickMs } }, client)
      })
      runtime.afterExternalCommit(entry)
      return agentView(await row(accountId, id))
    },

    async list(accountId: string, { limit, after }: { limit: number; after?: { createdAt: string; id: string } | undefined }) {
      const rows = await repo.list(accountId, { limit: limit + 1, after })
      const last = rows.length > limit ? rows[limit - 1] : undefined
      return { agents: rows.slice(0, limit).map((r) => agentView(r)), last: last && { createdAt: last.cursorAt, id: last.id } }
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
      const columns = ['name', 'model', 'skills', 'system_prompt', 'persona', 'strategy', 'temperature', 'is_public', 'public_description', 'run_interval_seconds'] as const
      for (const c of columns) if (patch[c] !== undefined) put(c, patch[c])
      const guarded = policy || patch.payout_wallet !== undefined
      if (sets.length === 0 && !guarded) return agentView(current)
      await withTransaction(async (client) => {
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
      await repo.assertOwned(accountId, id)
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
      await repo.assertOwned(accountId, agentId)
      return (await repo.whitelist(agentId)).map(whitelistView)
    },

    async addToWhitelist(accountId: string, agentId: string, { address, label }: { address: string; label?: string | undefined }, actor: AuditActor) {
      const agent = await row(accountId, agentId)
      if (agent.status === 'deleted') throw new InvalidStateError({ event: 'change the whitelist', state: 'deleted' })
      const entry = await repo.addToWhitelist({ agentId, accountId, address, label: label ?? null, holdSeconds: deps.whitelistHoldSeconds, actor })
      return whitelistView(entry)
    },

    async removeFromWhitelist(accountId: string, agentId: string, address: string, actor: AuditActor) {
      await repo.assertOwned(accountId, agentId)
      const entry = await repo.removeFromWhitelist({ agentId, accountId, address, actor })
      if (!entry) throw new NotFoundError('Whitelist entry')
      return whitelistView(entry)
    },
  }
}

/** A whitelist entry as the API shows it (camelCase). */
function whitelistView(r: WhitelistEntry) {
  return {
    address: r.address,
    label: r.label,
    usableAt: iso(r.usableAt),
    usable: new Date(r.usableAt).getTime() <= Date.now(),
    createdAt: iso(r.createdAt),
  }
}

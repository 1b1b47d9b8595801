import { InvalidStateError, NotFoundError } from '../errors.ts'
import type { AgentUpdateBody } from './agent.schema.ts'
import type { AgentRowCache } from './agentRowCache.ts'
import { agentView, type AgentView } from './agentView.ts'
import type { AuditActor } from './auditTrail.ts'
import type { Queryable } from '../billing/ports.ts'
import type { GuardrailPatch } from './guardrailChange.ts'
import type { AgentActors, AgentConfigPatch, AgentsRepository, WithTransaction } from './ports.ts'
import { resolvePolicyTokens, type ResolveVerifiedSymbol } from './resolvePolicyTokens.ts'

export type UpdateAgentDeps = {
  agents: AgentsRepository
  /** A change of the run interval is told to the agent's actor (its schedule timer is re-armed). */
  actors: Pick<AgentActors, 'scheduleChanged'>
  rows: AgentRowCache
  withTransaction: WithTransaction
  resolveVerifiedSymbol?: ResolveVerifiedSymbol | undefined
  /** The hold before any loosening of the policy or payout wallet takes effect (WHITELIST_HOLD_SECONDS). */
  whitelistHoldSeconds: number
  /**
   * Stores a guardrail change in the caller's transaction (src/adapters/db/guardrails.store.ts): matured
   * pending changes folded in, what tightens applied, what loosens held, every part journaled.
   */
  guardrails: { apply(tx: Queryable, p: { agentId: string; accountId: string; actor: AuditActor; patch: GuardrailPatch; holdSeconds: number }): Promise<void> }
}
export type UpdateAgentInput = AgentUpdateBody & { accountId: string; agentId: string; actor: AuditActor }

const CONFIG_COLUMNS = ['name', 'model', 'skills', 'system_prompt', 'persona', 'strategy', 'temperature', 'is_public', 'public_description', 'run_interval_seconds', 'allow_copy'] as const

/**
 * Updates an agent. A change of its policy or payout wallet (the route requires the admin scope
 * for it) tightens at once and loosens after the hold, and is journaled with `actor`. 404 when
 * the agent is not the account's, also when it was sold while this ran; 409 once deleted.
 *
 * @example
 * const agent = await updateAgent(deps, { accountId, agentId, actor, name: 'renamed' })
 */
export async function updateAgent(deps: UpdateAgentDeps, { accountId, agentId, actor, ...patch }: UpdateAgentInput): Promise<AgentView> {
  deps.rows.drop(agentId)
  const current = await deps.agents.getOwned(accountId, agentId)
  if (current.status === 'deleted') throw new InvalidStateError({ event: 'update', state: 'deleted' })
  const policy = await resolvePolicyTokens(patch.policy, deps.resolveVerifiedSymbol)
  const set: Record<string, unknown> = {}
  for (const c of CONFIG_COLUMNS) if (patch[c] !== undefined) set[c] = patch[c]
  const guarded = policy || patch.payout_wallet !== undefined
  if (Object.keys(set).length === 0 && !guarded) return agentView(current)
  const rescheduled = patch.run_interval_seconds !== undefined && patch.run_interval_seconds !== current.runIntervalSeconds
  const afterCommit = await deps.withTransaction(async (tx) => {
    // Locks the row, so concurrent updates apply one after the other.
    if (!(await deps.agents.updateConfig({ accountId, agentId, set: set as AgentConfigPatch }, tx))) {
      // Not the account's any more (sold since the read above), or deleted meanwhile.
      if (!(await deps.agents.findOwned(accountId, agentId))) throw new NotFoundError('Agent')
      throw new InvalidStateError({ event: 'update', state: 'deleted' })
    }
    const told = rescheduled ? await deps.actors.scheduleChanged({ agentId, accountId }, tx) : undefined
    if (guarded) {
      const change = { policy, payout_wallet: patch.payout_wallet }
      await deps.guardrails.apply(tx, { agentId, accountId, actor, patch: change, holdSeconds: deps.whitelistHoldSeconds })
    }
    return told
  })
  afterCommit?.()
  deps.rows.drop(agentId)
  return agentView(await deps.agents.getOwned(accountId, agentId))
}

import type { AgentsRepository, AuditReader } from './ports.ts'

export type ListAgentAuditInput = { accountId: string; agentId: string; limit: number; cursor?: string | undefined }

/**
 * The agent's audit trail (policy, payout wallet and whitelist changes), newest first.
 *
 * @example
 * const { entries, nextCursor } = await listAgentAudit({ agents, audit }, { accountId, agentId, limit: 20 })
 */
export async function listAgentAudit(deps: { agents: AgentsRepository; audit: AuditReader }, { accountId, agentId, limit, cursor }: ListAgentAuditInput) {
  await deps.agents.assertOwned(accountId, agentId)
  return deps.audit({ accountId, subjectId: agentId, limit, cursor })
}

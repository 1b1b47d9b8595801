import { agentView, type AgentView } from './agentView.ts'
import type { AgentsRepository } from './ports.ts'

export type ListAgentsInput = { accountId: string; limit: number; after?: { createdAt: string; id: string } | undefined }

/**
 * The account's agents, newest first; `last` is the page's last position when more follow.
 *
 * @example
 * const { agents, last } = await listAgents({ agents: repo }, { accountId, limit: 20 })
 */
export async function listAgents(
  deps: { agents: AgentsRepository },
  { accountId, limit, after }: ListAgentsInput,
): Promise<{ agents: AgentView[]; last: { createdAt: string; id: string } | undefined }> {
  const rows = await deps.agents.list(accountId, { limit: limit + 1, after })
  const last = rows.length > limit ? rows[limit - 1] : undefined
  return { agents: rows.slice(0, limit).map((r) => agentView(r)), last: last && { createdAt: last.cursorAt, id: last.id } }
}

import { agentView } from './agents.service.ts'
import type { AgentsRepository } from './ports.ts'

export type ListAgentsInput = { accountId: string; limit: number; after?: { createdAt: string; id: string } | undefined }

/**
 * The account's agents, newest first, `limit` at most; `last` is where the next page starts
 * (absent on the last page).
 *
 * @example
 * const { agents, last } = await listAgents({ agents: repo }, { accountId, limit: 20 })
 */
export async function listAgents(deps: { agents: AgentsRepository }, { accountId, limit, after }: ListAgentsInput) {
  const rows = await deps.agents.list(accountId, { limit: limit + 1, after })
  const last = rows.length > limit ? rows[limit - 1] : undefined
  return { agents: rows.slice(0, limit).map((r) => agentView(r)), last: last && { createdAt: last.cursorAt, id: last.id } }
}

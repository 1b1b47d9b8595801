import { NotFoundError } from '../errors.ts'
import type { AgentRowCache } from './agentRowCache.ts'
import { agentView, type AgentView } from './agentView.ts'
import type { AgentActors, AgentLiveStatus, AgentRecord, AgentsRepository } from './ports.ts'

export type GetAgentDeps = { agents: AgentsRepository; actors: AgentActors; rows: AgentRowCache }
export type AgentRef = { accountId: string; agentId: string }

/**
 * One agent of the account with its actor's live status; another account's agent is not found.
 *
 * @example
 * const agent = await getAgent(deps, { accountId, agentId })
 */
export async function getAgent(deps: GetAgentDeps, ref: AgentRef): Promise<AgentView> {
  const { row, live } = await readAgent(deps, ref)
  return agentView(row, live)
}

/**
 * The account's agent as its record, the status its actor's (live); the configuration from memory
 * when fresh (up to 2 s, dropped by a write on this node). 404 for another account's agent.
 *
 * @example
 * const agent = await readOwnedAgent(deps, { accountId, agentId })
 */
export async function readOwnedAgent(deps: GetAgentDeps, ref: AgentRef): Promise<AgentRecord> {
  const { row, live } = await readAgent(deps, ref)
  return { ...row, status: live.status, statusReason: live.reason }
}

/** The agent's row (from memory when fresh) and its actor's live status. */
export async function readAgent({ agents, actors, rows }: GetAgentDeps, { accountId, agentId }: AgentRef): Promise<{ row: AgentRecord; live: AgentLiveStatus }> {
  const cached = rows.get(agentId)
  // A row from memory of another account may be stale (the agent was sold to this one): read it again.
  if (cached && cached.accountId !== accountId) {
    rows.drop(agentId)
    return readAgent({ agents, actors, rows }, { accountId, agentId })
  }
  const row = cached ?? (await agents.getOwned(accountId, agentId))
  if (row.accountId !== accountId) throw new NotFoundError('Agent')
  if (!cached) rows.set(row)
  const live = await actors.status(accountId, agentId)
  // A row from memory whose actor is not this account's (any more): the agent was sold, read it again.
  if (cached && !live) {
    rows.drop(agentId)
    return readAgent({ agents, actors, rows }, { accountId, agentId })
  }
  return { row, live: live ?? { status: row.status, reason: row.statusReason } }
}

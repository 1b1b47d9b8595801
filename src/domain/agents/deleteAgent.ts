import type { AgentView } from './agentView.ts'
import { commandAgent } from './commandAgent.ts'
import type { AgentRef, GetAgentDeps } from './getAgent.ts'

/**
 * Deletes the agent: its actor ends for good (the row is kept for the audit trail and its wallet).
 *
 * @example
 * const agent = await deleteAgent(deps, { accountId, agentId })
 */
export function deleteAgent(deps: GetAgentDeps, ref: AgentRef): Promise<AgentView> {
  return commandAgent(deps, ref, 'agent.delete')
}

import type { AgentView } from './agentView.ts'
import { commandAgent } from './commandAgent.ts'
import type { AgentRef, GetAgentDeps } from './getAgent.ts'

/**
 * Stops the agent: its actor stops ticking; a stopped agent can start again.
 *
 * @example
 * const agent = await stopAgent(deps, { accountId, agentId })
 */
export function stopAgent(deps: GetAgentDeps, ref: AgentRef): Promise<AgentView> {
  return commandAgent(deps, ref, 'agent.stop')
}

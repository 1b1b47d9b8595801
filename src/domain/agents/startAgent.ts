import type { AgentView } from './agentView.ts'
import { commandAgent } from './commandAgent.ts'
import type { AgentRef, GetAgentDeps } from './getAgent.ts'

/**
 * Starts the agent: its actor begins ticking (409 when its state refuses it).
 *
 * @example
 * const agent = await startAgent(deps, { accountId, agentId })
 */
export function startAgent(deps: GetAgentDeps, ref: AgentRef): Promise<AgentView> {
  return commandAgent(deps, ref, 'agent.start')
}

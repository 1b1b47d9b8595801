import { NotFoundError } from '../errors.ts'
import { assertNotListed } from './listedAgent.ts'
import { agentView, type AgentView } from './agentView.ts'
import { readAgent, type AgentRef, type GetAgentDeps } from './getAgent.ts'
import type { AgentCommand } from './ports.ts'

/**
 * Sends a lifecycle command to the agent's actor (start, stop, delete: each its own use case);
 * answers once the new state is committed. The configuration is read after, from memory when fresh.
 */
export async function commandAgent(deps: GetAgentDeps, ref: AgentRef, command: AgentCommand): Promise<AgentView> {
  if (!(await deps.actors.status(ref.accountId, ref.agentId))) throw new NotFoundError('Agent')
  // A listed agent stays paused until its listing is cancelled or sold (the buyer gets it stopped).
  const current = await deps.agents.findOwned(ref.accountId, ref.agentId)
  if (current) assertNotListed(current, command === 'agent.start' ? 'start the agent' : command === 'agent.stop' ? 'stop the agent' : 'delete the agent')
  const live = await deps.actors.send(ref.agentId, command)
  // A command changes the status (from the actor), not the configuration.
  const { row } = await readAgent(deps, ref)
  return agentView(row, live)
}

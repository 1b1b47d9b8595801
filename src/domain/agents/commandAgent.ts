import { NotFoundError } from '../errors.ts'
import { assertNotListed, LISTED } from './listedAgent.ts'
import { agentView, type AgentView } from './agentView.ts'
import { readAgent, type AgentRef, type GetAgentDeps } from './getAgent.ts'
import type { AgentCommand } from './ports.ts'

const actionOf = (command: AgentCommand) => (command === 'agent.start' ? 'start the agent' : command === 'agent.stop' ? 'stop the agent' : 'delete the agent')

/**
 * Sends a lifecycle command to the agent's actor (start, stop, delete: each its own use case);
 * answers once the new state is committed. A start or stop reads nothing but the actor (held in
 * memory) before its commit: a listed agent is `paused` for its listing there, and only then is
 * its row read, for the listing to name in the 409. A delete reads the row first, so that an
 * agent whose listing is written but whose pause is not (yet) is never deleted while for sale.
 * The configuration in the answer comes from memory when fresh.
 */
export async function commandAgent(deps: GetAgentDeps, ref: AgentRef, command: AgentCommand): Promise<AgentView> {
  const status = await deps.actors.status(ref.accountId, ref.agentId)
  if (!status) throw new NotFoundError('Agent')
  if (command === 'agent.delete' || (status.status === 'paused' && status.reason === LISTED)) {
    const current = await deps.agents.findOwned(ref.accountId, ref.agentId)
    if (current) assertNotListed(current, actionOf(command))
  }
  const live = await deps.actors.send(ref.agentId, command)
  // A command changes the status (from the actor), not the configuration.
  const { row } = await readAgent(deps, ref)
  return agentView(row, live)
}

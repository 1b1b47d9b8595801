import { whitelistView, type WhitelistView } from './agentView.ts'
import type { AgentsRepository } from './ports.ts'

/**
 * The agent's transfer whitelist, oldest first, with when each address becomes usable.
 *
 * @example
 * const list = await listWhitelist({ agents }, { accountId, agentId })
 */
export async function listWhitelist(deps: { agents: AgentsRepository }, { accountId, agentId }: { accountId: string; agentId: string }): Promise<WhitelistView[]> {
  await deps.agents.assertOwned(accountId, agentId)
  return (await deps.agents.whitelist(agentId)).map(whitelistView)
}

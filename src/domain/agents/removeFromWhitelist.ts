import { NotFoundError } from '../errors.ts'
import { whitelistView, type WhitelistView } from './agentView.ts'
import type { AuditActor } from './auditTrail.ts'
import type { AgentsRepository } from './ports.ts'

export type RemoveFromWhitelistInput = { accountId: string; agentId: string; address: string; actor: AuditActor }

/**
 * Removes a whitelisted address at once (a tightening needs no hold); journaled with `actor`.
 *
 * @example
 * const removed = await removeFromWhitelist({ agents }, { accountId, agentId, address, actor })
 */
export async function removeFromWhitelist(
  deps: { agents: AgentsRepository },
  { accountId, agentId, address, actor }: RemoveFromWhitelistInput,
): Promise<WhitelistView> {
  await deps.agents.assertOwned(accountId, agentId)
  const entry = await deps.agents.removeFromWhitelist({ agentId, accountId, address, actor })
  if (!entry) throw new NotFoundError('Whitelist entry')
  return whitelistView(entry)
}

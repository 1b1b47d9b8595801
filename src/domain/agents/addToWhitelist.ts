import { InvalidStateError, NotFoundError, ValidationError } from '../errors.ts'
import { whitelistView, type WhitelistView } from './agentView.ts'
import type { AuditActor } from './auditTrail.ts'
import type { AgentsRepository } from './ports.ts'

export type AddToWhitelistInput = { accountId: string; agentId: string; address: string; label?: string | undefined; actor: AuditActor }

/**
 * Whitelists a transfer address (or relabels it); a new address is usable after the hold.
 * Journaled with `actor`. 404 when the agent is not the account's, also when it was sold
 * while this ran (the write is conditional on the owner).
 *
 * @example
 * const entry = await addToWhitelist({ agents, whitelistHoldSeconds: 86_400 }, { accountId, agentId, address, actor })
 */
export async function addToWhitelist(
  deps: { agents: AgentsRepository; whitelistHoldSeconds: number; /** The symbol of a token the service knows at an address (absent without a chain). */ tokenContractAt?: ((address: string) => Promise<string | undefined>) | undefined },
  { accountId, agentId, address, label, actor }: AddToWhitelistInput,
): Promise<WhitelistView> {
  const agent = await deps.agents.getOwned(accountId, agentId)
  if (agent.status === 'deleted') throw new InvalidStateError({ event: 'change the whitelist', state: 'deleted' })
  // A transfer to a token's own contract is lost, as one to the zero address (refused by the schema).
  const token = await deps.tokenContractAt?.(address)
  if (token) throw new ValidationError({ address: `This is the ${token} token's own contract: tokens sent there are lost. Whitelist the wallet that should receive them.` })
  const entry = await deps.agents.addToWhitelist({ agentId, accountId, address, label: label ?? null, holdSeconds: deps.whitelistHoldSeconds, actor })
  // Sold since the read above: the write found the agent another account's and wrote nothing.
  if (!entry) throw new NotFoundError('Agent')
  return whitelistView(entry)
}

import type { WalletPorts } from './ports.ts'
import { whitelistEntryView } from './walletRules.ts'

export type GetWhitelistDeps = Pick<WalletPorts, 'agents' | 'clock'>
export type GetWhitelistInput = { accountId: string; agentId: string }

/**
 * The addresses the agent may transfer to, oldest first; each is `usable` once its hold has
 * passed (`usableAt`).
 *
 * @example
 * const { whitelist } = await getWhitelist(deps, { accountId, agentId })
 */
export async function getWhitelist(deps: GetWhitelistDeps, input: GetWhitelistInput) {
  await deps.agents.assertOwned(input.accountId, input.agentId)
  const now = deps.clock.now()
  return { whitelist: (await deps.agents.whitelist(input.agentId)).map((e) => whitelistEntryView(e, now)) }
}

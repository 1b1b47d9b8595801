import type { WalletPorts, WalletToken } from './ports.ts'
import type { PortfolioInput } from './wallet.schema.ts'
import { costBasis, holdingOf, totalValueUsd, type Holding } from './walletRules.ts'

export type GetPortfolioDeps = Pick<WalletPorts, 'agents' | 'tokens' | 'chain' | 'portfolio'>
export type GetPortfolioInput = PortfolioInput & { accountId: string; /** Values the wallet as of this block (the latest when absent). */ blockNumber?: bigint }

/**
 * ETH and every token the wallet may hold (quote assets, stocks, tokens it launched, traded or
 * received), valued in USD, with cost basis and unrealised PnL from the agent's own swaps. ETH is
 * always listed; other tokens only when held. A token whose price cannot be read is unpriced.
 *
 * @example
 * const p = await getPortfolio(deps, { accountId, agentId })
 * p.totalValueUsd // '15012.50'
 */
export async function getPortfolio(deps: GetPortfolioDeps, input: GetPortfolioInput) {
  const agent = await deps.agents.getOwned(input.accountId, input.agentId)
  const owner = agent.walletAddress
  const candidates = new Map<string, WalletToken>()
  const add = (t: WalletToken) => candidates.set(t.native ? 'ETH' : t.address, t)
  for (const t of await deps.portfolio.standardTokens()) add(t)
  for (const address of await deps.portfolio.otherTokenAddresses(agent.id, owner)) {
    if (!address || candidates.has(address.toLowerCase())) continue
    const t = await deps.tokens.resolve(address)
    if (t) add(t)
  }
  const basis = costBasis(await deps.portfolio.confirmedSwaps(agent.id))
  const prices = await deps.chain.prices(input.blockNumber)
  const holdings: Holding[] = []
  for (const token of candidates.values()) {
    const balance = await deps.portfolio.holding(token, owner, input.blockNumber)
    if (balance === null || (balance === 0n && !token.native)) continue
    const priced = await prices.usd(token, balance).catch(() => undefined)
    holdings.push(holdingOf(token, balance, priced, basis.get(token.address)))
  }
  return { agentId: agent.id, walletAddress: owner, holdings, totalValueUsd: totalValueUsd(holdings) }
}
export type Portfolio = Awaited<ReturnType<typeof getPortfolio>>

import { getPortfolio, type GetPortfolioDeps } from './getPortfolio.ts'

export type GetPortfolioHistoryInput = {
  accountId: string
  agentId: string
  /** The blocks to value the wallet at, oldest first, with their time. */
  blocks: { number: bigint; at: string }[]
}
export type PortfolioPoint = { blockNumber: string; at: string; totalValueUsd: string | null }

/**
 * The wallet's total USD value at each of the given blocks (balances and prices read at that
 * block), for a chart of its value over time. A block the node no longer holds the state of is
 * left out rather than failing the whole series.
 *
 * @example
 * const points = await getPortfolioHistory(deps, { accountId, agentId, blocks: [{ number: 120n, at: '2026-11-25T10:00:00.000Z' }] })
 */
export async function getPortfolioHistory(deps: GetPortfolioDeps, input: GetPortfolioHistoryInput): Promise<PortfolioPoint[]> {
  await deps.agents.getOwned(input.accountId, input.agentId)
  const points: PortfolioPoint[] = []
  for (const block of input.blocks) {
    const value = await getPortfolio(deps, { accountId: input.accountId, agentId: input.agentId, blockNumber: block.number }).catch(() => undefined)
    if (value) points.push({ blockNumber: block.number.toString(), at: block.at, totalValueUsd: value.totalValueUsd })
  }
  return points
}

import { randomUUID } from 'node:crypto'
import type pg from 'pg'
import type { ActorRuntime } from './actors/actorRuntime.ts'
import type { WalletDeps } from './http/appDeps.ts'
import { createSwapChainPorts } from './chain/swapAdapters.ts'
import { createSwapQuoteStore } from './db/swapQuote.store.ts'
import { ChainNotConfiguredError } from './domain/errors.ts'
import type { AgentsRepository } from './domain/agents/ports.ts'
import type { SwapAgents, SwapPorts } from './domain/swaps/ports.ts'
import { quoteSwap, type QuoteSwapInput } from './domain/swaps/quoteSwap.ts'
import { executeSwap, type ExecuteSwapInput } from './domain/swaps/executeSwap.ts'
import { getSwap, type GetSwapInput } from './domain/swaps/getSwap.ts'
import { agentView } from './domain/agents/agents.service.ts'
import type { Logger } from './logger.ts'
import { createTokenPrices } from './chain/tokenAdapters.ts'
import { createFeeChainPorts } from './chain/feeAdapters.ts'
import { createTokenBoardStore } from './db/tokenBoard.store.ts'
import { createMarketStatsStore } from './db/marketStats.store.ts'
import { createMemo } from './domain/util/memo.ts'
import type { FeePorts } from './domain/fees/ports.ts'
import type { GetFeeEarningsInput, ClaimFeesInput, PlanClaimInput } from './domain/fees/fees.schema.ts'
import { getFeeEarnings } from './domain/fees/getFeeEarnings.ts'
import { claimFees, previewClaimFees } from './domain/fees/claimFees.ts'
import { getFeeStats } from './domain/fees/getFeeStats.ts'
import type { GetPriceInput, GetTokenInput, ListQuoteAssetsInput, ListTokensInput, ListTradesInput } from './domain/tokens/tokens.schema.ts'
import { listTokens } from './domain/tokens/listTokens.ts'
import { getToken } from './domain/tokens/getToken.ts'
import { listTrades } from './domain/tokens/listTrades.ts'
import { getPrice } from './domain/tokens/getPrice.ts'
import { listQuoteAssets } from './domain/tokens/listQuoteAssets.ts'
import { listStockTokens } from './domain/tokens/listStockTokens.ts'
import { getLeaderboard, type GetLeaderboardInput } from './domain/market/getLeaderboard.ts'
import { getStats } from './domain/market/getStats.ts'

/** What src/services.ts has built: the database, the actor runtime, the chain's wallet operations. */
export type CoreAdapters = {
  pool: pg.Pool
  runtime: ActorRuntime
  agents: AgentsRepository
  /** Absent without a chain: the use cases that need one refuse with 503 `chain_unavailable`. */
  wallet: WalletDeps | undefined
  logger: Logger
}

/** How long platform-wide answers (stats, the leaderboard ranking) are shared by every caller. */
const PLATFORM_FIGURES_TTL_MS = 2000

/**
 * The composition root: builds the ports once from the adapters and returns the use cases.
 * Routes (and next, tools, MCP and effect handlers) take `core`; nothing else wires dependencies.
 *
 * @example
 * const core = createCore({ pool, runtime, wallet, agents })
 * const quote = await core.quoteSwap(readSwapRequest(accountId, body))
 */
export function createCore(adapters: CoreAdapters) {
  const { pool, runtime, wallet, agents, logger } = adapters
  const swapPorts: SwapPorts | undefined = wallet && {
    agents: swapAgentsOf(agents),
    quotes: createSwapQuoteStore(pool),
    ...createSwapChainPorts({ pool, wallet, runtime }),
    clock: { now: () => Date.now() },
    newId: randomUUID,
  }
  const swaps = () => {
    if (!swapPorts) throw new ChainNotConfiguredError()
    return swapPorts
  }
  const board = createTokenBoardStore(pool)
  const tokenPorts = { prices: createTokenPrices({ chain: wallet?.chain, logger }), board }
  const marketPorts = { prices: tokenPorts.prices, stats: createMarketStatsStore(pool), memo: createMemo(PLATFORM_FIGURES_TTL_MS) }
  const feeChain = wallet && createFeeChainPorts({ pool, wallet, runtime })
  const feePorts = (): FeePorts => {
    if (!feeChain) throw new ChainNotConfiguredError()
    return { agents, tokens: board, ...feeChain, prices: marketPorts.prices, stats: marketPorts.stats }
  }
  return {
    quoteSwap: (input: QuoteSwapInput) => quoteSwap(swaps(), input),
    executeSwap: (input: ExecuteSwapInput) => executeSwap(swaps(), input),
    getSwap: (input: GetSwapInput) => getSwap(swaps(), input),
    getAgent: async ({ accountId, agentId }: { accountId: string; agentId: string }) => agentView(await agents.getOwned(accountId, agentId)),
    /** The account's newest agent ids, at most `limit` (a tool's `agent_id` may be left out when there is one). */
    listAgentIds: async (accountId: string, limit: number) => (await agents.list(accountId, { limit })).map((a) => a.id),
    getFeeEarnings: (input: GetFeeEarningsInput) => getFeeEarnings(feePorts(), input),
    claimFees: (input: ClaimFeesInput) => claimFees(feePorts(), input),
    previewClaimFees: (input: PlanClaimInput) => previewClaimFees(feePorts(), input),
    getFeeStats: () => getFeeStats(marketPorts),
    listQuoteAssets: (input: ListQuoteAssetsInput) => listQuoteAssets(tokenPorts, input),
    listTokens: (input: ListTokensInput) => listTokens(tokenPorts, input),
    getToken: (input: GetTokenInput) => getToken(tokenPorts, input),
    listTrades: (input: ListTradesInput) => listTrades(tokenPorts, input),
    getPrice: (input: GetPriceInput) => getPrice(tokenPorts, input),
    listStockTokens: () => listStockTokens(tokenPorts),
    getLeaderboard: (input: GetLeaderboardInput) => getLeaderboard(marketPorts, input),
    getStats: () => getStats(marketPorts),
  }
}

export type Core = ReturnType<typeof createCore>

/** The swap's view of the agents repository: the wallet, the effective policy and the status. */
function swapAgentsOf(agents: AgentsRepository): SwapAgents {
  return {
    async forSwap(accountId, agentId) {
      const agent = await agents.findOwned(accountId, agentId)
      return agent && { wallet: agent.walletAddress, policy: agent.policy, status: agent.status }
    },
  }
}

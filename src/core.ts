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
import type { CreditsRepository } from './domain/billing/ports.ts'
import { getBilling } from './domain/billing/getBilling.ts'
import { listCreditTransactions, type ListCreditTransactionsInput } from './domain/billing/listCreditTransactions.ts'
import { listAgents, type ListAgentsInput } from './domain/agents/listAgents.ts'
import { modelView, type Model } from './llm/modelCatalog.ts'

/** What src/services.ts has built: the database, the actor runtime, the chain's wallet operations. */
export type CoreAdapters = {
  pool: pg.Pool
  runtime: ActorRuntime
  agents: AgentsRepository
  /** Absent without a chain: the use cases that need one refuse with 503 `chain_unavailable`. */
  wallet: WalletDeps | undefined
  /** The credit ledger. */
  credits: CreditsRepository
  /** The model catalog (src/llm/models.json or MODEL_CATALOG). */
  models: ReadonlyMap<string, Model>
}

/**
 * The composition root: builds the ports once from the adapters and returns the use cases.
 * Routes (and next, tools, MCP and effect handlers) take `core`; nothing else wires dependencies.
 *
 * @example
 * const core = createCore({ pool, runtime, wallet, agents })
 * const quote = await core.quoteSwap(readSwapRequest(accountId, body))
 */
export function createCore(adapters: CoreAdapters) {
  const { pool, runtime, wallet, agents } = adapters
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
  return {
    quoteSwap: (input: QuoteSwapInput) => quoteSwap(swaps(), input),
    executeSwap: (input: ExecuteSwapInput) => executeSwap(swaps(), input),
    getSwap: (input: GetSwapInput) => getSwap(swaps(), input),
    getAgent: async ({ accountId, agentId }: { accountId: string; agentId: string }) => agentView(await agents.getOwned(accountId, agentId)),
    /** The account's newest agent ids, at most `limit` (a tool's `agent_id` may be left out when there is one). */
    listAgentIds: async (accountId: string, limit: number) => (await agents.list(accountId, { limit })).map((a) => a.id),
    listAgents: (input: ListAgentsInput) => listAgents({ agents }, input),
    getBilling: (input: { accountId: string }) => getBilling({ credits: adapters.credits }, input),
    listCreditTransactions: (input: ListCreditTransactionsInput) => listCreditTransactions({ credits: adapters.credits }, input),
    listModels: () => [...adapters.models.values()].map(modelView),
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

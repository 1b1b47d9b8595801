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
import { startChatTurn, type ChatDeps, type StartChatTurnInput } from './domain/chat/startChatTurn.ts'
import { awaitChatTurn, getChatTurn } from './domain/chat/getChatTurn.ts'
import { listMessages } from './domain/chat/listMessages.ts'
import type { ChatMessagesRepository, ChatModel, ModelProvider } from './domain/chat/ports.ts'
import type { CreditsRepository } from './domain/billing/ports.ts'
import { createChatTurns } from './actors/chatTurns.ts'
import type { ChatBus, ChatBusEvent } from './actors/chatBus.ts'
import { toolsFor } from './tools/registry.ts'
import { MODEL_SCOPES } from './actors/toolCall.effect.ts'

/** What src/services.ts has built: the database, the actor runtime, the chain's wallet operations. */
export type CoreAdapters = {
  pool: pg.Pool
  runtime: ActorRuntime
  agents: AgentsRepository
  /** Absent without a chain: the use cases that need one refuse with 503 `chain_unavailable`. */
  wallet: WalletDeps | undefined
  chat: ChatAdapters
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
  const chat = chatPortsOf(adapters)
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
    startChatTurn: (input: StartChatTurnInput) => startChatTurn(chat.deps, input),
    awaitChatTurn: (input: { turnId: string; waitMs?: number }) => awaitChatTurn(chat.deps, { turnId: input.turnId, waitMs: input.waitMs ?? chat.waitMs }),
    getChatTurn: (input: { accountId: string; agentId: string; turnId: string }) => getChatTurn(chat.deps, input),
    listMessages: (input: { accountId: string; agentId: string; query: unknown }) => listMessages({ agents, messages: chat.messages }, input),
    /** Live events of a turn (text deltas, tool calls and results) in this process; returns the unsubscribe. */
    subscribeChatTurn: (turnId: string, listener: (event: ChatBusEvent) => void) => chat.bus.subscribe(turnId, listener),
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

/** What chat is built from: the catalog, the provider, the ledger, the messages and the live bus. */
export type ChatAdapters = {
  models: ReadonlyMap<string, ChatModel>
  defaultModel: ChatModel
  provider: ModelProvider
  credits: CreditsRepository
  messages: ChatMessagesRepository
  bus: ChatBus
  limits: { maxRounds: number; maxTokens: number; waitMs: number }
}

function chatPortsOf({ pool, runtime, agents, chat }: CoreAdapters) {
  const deps: ChatDeps & { turns: ChatDeps['turns'] } = {
    agents,
    models: chat.models,
    defaultModel: chat.defaultModel,
    provider: chat.provider,
    credits: chat.credits,
    turns: createChatTurns({ pool, runtime, messages: chat.messages }),
    modelTools: (granted) => toolsFor({ scopes: MODEL_SCOPES, granted }).map((t) => t.name),
    limits: chat.limits,
    newId: randomUUID,
  }
  return { deps, messages: chat.messages, bus: chat.bus, waitMs: chat.limits.waitMs }
}

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
import type { AgentsService } from './domain/agents/agents.service.ts'
import type { AuditActor } from './domain/agents/auditTrail.ts'
import { createWalletChainPorts } from './chain/walletAdapters.ts'
import { createWalletStore } from './db/wallet.store.ts'
import type { WalletPorts } from './domain/wallet/ports.ts'
import { transferFunds, type TransferFundsInput } from './domain/wallet/transferFunds.ts'
import { previewTransfer, type PreviewTransferInput } from './domain/wallet/previewTransfer.ts'
import { getPortfolio, type GetPortfolioInput } from './domain/wallet/getPortfolio.ts'
import { getWhitelist, type GetWhitelistInput } from './domain/wallet/getWhitelist.ts'
import { listTransactions, type ListTransactionsInput } from './domain/wallet/listTransactions.ts'

/** What src/services.ts has built: the database, the actor runtime, the chain's wallet operations. */
export type CoreAdapters = {
  pool: pg.Pool
  runtime: ActorRuntime
  agents: AgentsRepository
  /** Absent without a chain: the use cases that need one refuse with 503 `chain_unavailable`. */
  wallet: WalletDeps | undefined
  /** Whitelist changes stay use cases of the agents service (the hold, the audit trail); core exposes them. */
  whitelistChanges: Pick<AgentsService, 'addToWhitelist' | 'removeFromWhitelist'>
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
    ...walletUseCases(adapters),
  }
}

export type Core = ReturnType<typeof createCore>

/** Transfers, the portfolio, the whitelist and the outbox (src/domain/wallet); those that read the chain refuse without one. */
function walletUseCases({ pool, runtime, wallet, agents, whitelistChanges }: CoreAdapters) {
  const store = createWalletStore(pool)
  const base = { agents, outbox: store.outbox, clock: { now: () => Date.now() } }
  const ports: WalletPorts | undefined = wallet && { ...base, ...createWalletChainPorts({ pool, wallet, runtime, store }) }
  const withChain = () => {
    if (!ports) throw new ChainNotConfiguredError()
    return ports
  }
  type WhitelistChange = { accountId: string; agentId: string; address: string; actor: AuditActor }
  return {
    transferFunds: (input: TransferFundsInput) => transferFunds(withChain(), input),
    previewTransfer: (input: PreviewTransferInput) => previewTransfer(withChain(), input),
    getPortfolio: (input: GetPortfolioInput) => getPortfolio(withChain(), input),
    getWhitelist: (input: GetWhitelistInput) => getWhitelist(base, input),
    listTransactions: (input: ListTransactionsInput) => listTransactions(base, input),
    /** Adds (or relabels) an address; usable after the whitelist hold, journaled with `actor`. */
    addToWhitelist: ({ accountId, agentId, address, label, actor }: WhitelistChange & { label?: string | undefined }) =>
      whitelistChanges.addToWhitelist(accountId, agentId, { address, label }, actor),
    /** Removes an address at once (removing tightens: no hold), journaled with `actor`. */
    removeFromWhitelist: ({ accountId, agentId, address, actor }: WhitelistChange) => whitelistChanges.removeFromWhitelist(accountId, agentId, address, actor),
  }
}

/** The swap's view of the agents repository: the wallet, the effective policy and the status. */
function swapAgentsOf(agents: AgentsRepository): SwapAgents {
  return {
    async forSwap(accountId, agentId) {
      const agent = await agents.findOwned(accountId, agentId)
      return agent && { wallet: agent.walletAddress, policy: agent.policy, status: agent.status }
    },
  }
}

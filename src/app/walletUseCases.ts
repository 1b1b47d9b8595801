import { PLATFORM_FIGURES_TTL_MS, type CoreAdapters } from './coreAdapters.ts'
import type { tokenFacts } from './coreIntel.ts'
import { pnlUseCases } from './corePnl.ts'
import type { createWalletOperations } from '../actors/walletOp/walletOps.ts'
import { createWalletStore } from '../adapters/db/wallet.store.ts'
import { createWalletOutcomes } from '../adapters/db/walletOutcomes.ts'
import { agentKind } from '../actors/agent/agent.machine.ts'
import { ChainNotConfiguredError } from '../domain/errors.ts'
import type { WalletPorts } from '../domain/wallet/ports.ts'
import { transferFunds, type TransferFundsInput } from '../domain/wallet/transferFunds.ts'
import { previewTransfer, type PreviewTransferInput } from '../domain/wallet/previewTransfer.ts'
import { getPortfolio, type GetPortfolioInput } from '../domain/wallet/getPortfolio.ts'
import { getPortfolioHistory, type GetPortfolioHistoryInput } from '../domain/wallet/getPortfolioHistory.ts'
import { getWhitelist, type GetWhitelistInput } from '../domain/wallet/getWhitelist.ts'
import { listTransactions, type ListTransactionsInput } from '../domain/wallet/listTransactions.ts'
import { createWalletChainPorts } from '../adapters/chain/walletAdapters.ts'
import { createPaperStore } from '../adapters/db/paper.store.ts'
import { depositPaper, type DepositPaperInput } from '../domain/paper/depositPaper.ts'
import { createPolicyGate } from '../actors/walletOp/policyGate.ts'

/** Transfers, the portfolio, the whitelist and the outbox (src/domain/wallet); those that read the chain refuse without one. */
export function walletUseCases({ pool, runtime, wallet, agents }: CoreAdapters, walletOps: ReturnType<typeof createWalletOperations>, facts: () => ReturnType<typeof tokenFacts>) {
  // What the service recorded, joined with what the operations' actors say (the runtime's read model).
  const outcomes = createWalletOutcomes(pool, { actorsInStates: runtime.read.actorsInStates, agentStates: (ids) => runtime.read.statesOf(agentKind.kind, ids) })
  const store = { ...createWalletStore(pool), ...outcomes }
  const base = { agents, outbox: store.outbox, clock: { now: () => Date.now() } }
  const ports: WalletPorts | undefined = wallet && { ...base, ...createWalletChainPorts({ pool, wallet, store }), operations: walletOps.transfers, policies: createPolicyGate(pool) }
  const withChain = () => {
    if (!ports) throw new ChainNotConfiguredError()
    return ports
  }
  return {
    transferFunds: (input: TransferFundsInput) => transferFunds(withChain(), input),
    previewTransfer: (input: PreviewTransferInput) => previewTransfer(withChain(), input),
    getPortfolio: (input: GetPortfolioInput) => getPortfolio(withChain(), input),
    getPortfolioHistory: (input: GetPortfolioHistoryInput) => getPortfolioHistory(withChain(), input),
    ...pnlUseCases({ withChain, ledgers: store, tokenFacts: facts, ttlMs: PLATFORM_FIGURES_TTL_MS }),
    /** A virtual deposit into a paper agent's ledger (docs/api.md, "Paper agents"). */
    depositPaper: (input: DepositPaperInput) => {
      const w = withChain()
      const latestBlock = () => wallet!.chain.publicClient.getBlockNumber({ cacheTime: 0 })
      return depositPaper({ ...w, deposits: { ...createPaperStore(pool), latestBlock } }, input)
    },
    getWhitelist: (input: GetWhitelistInput) => getWhitelist(base, input),
    listTransactions: (input: ListTransactionsInput) => listTransactions(base, input),
  }
}

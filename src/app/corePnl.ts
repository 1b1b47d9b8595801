import { createMemo } from '../domain/util/memo.ts'
import type { TokenFacts } from '../domain/intel/tokenFacts.ts'
import type { WalletPorts } from '../domain/wallet/ports.ts'
import { getWalletPortfolio, type GetWalletPortfolioInput } from '../domain/wallet/getWalletPortfolio.ts'
import { getAgentPerformance, type GetAgentPerformanceInput } from '../domain/wallet/getAgentPerformance.ts'
import { getPnlLeaderboard, type GetPnlLeaderboardDeps, type GetPnlLeaderboardInput } from '../domain/wallet/getPnlLeaderboard.ts'

/**
 * Part of the composition root (src/app/core.ts spreads it into the wallet's use cases): what an
 * agent earned, from its PnL ledger (src/domain/wallet/pnlRules.ts).
 *
 * @example
 * const pnl = pnlUseCases({ withChain, ledgers: createWalletOutcomes(pool, actorReads), tokenFacts: () => tokenFacts(intelPorts), ttlMs: 2000 })
 */
export function pnlUseCases({ withChain, ledgers, tokenFacts, ttlMs }: {
  withChain: () => WalletPorts
  ledgers: GetPnlLeaderboardDeps['ledgers']
  tokenFacts: () => Promise<TokenFacts>
  ttlMs: number
}) {
  const memo = createMemo(ttlMs)
  return {
    getWalletPortfolio: (input: GetWalletPortfolioInput) => getWalletPortfolio({ ...withChain(), tokenFacts }, input),
    getAgentPerformance: (input: GetAgentPerformanceInput) => getAgentPerformance(withChain(), input),
    getPnlLeaderboard: (input: GetPnlLeaderboardInput) => getPnlLeaderboard({ ledgers, memo }, input),
  }
}

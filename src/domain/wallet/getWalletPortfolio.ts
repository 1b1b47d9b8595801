import { formatUnits } from 'viem'
import { NotFoundError } from '../errors.ts'
import type { TokenFacts } from '../intel/tokenFacts.ts'
import { portfolioLines, type GetPortfolioDeps } from './getPortfolio.ts'
import { pnlFields } from './pnlRules.ts'

export type GetWalletPortfolioDeps = GetPortfolioDeps & { tokenFacts(): Promise<TokenFacts> }
export type GetWalletPortfolioInput = { accountId: string; wallet: string }

const num = (v: string | null) => (v === null ? null : Number(v))
const QUOTE_NAMES: Record<string, string> = { ETH: 'Ether', WETH: 'Wrapped Ether', USDC: 'USD Coin' }

/**
 * The reference client's `getPortfolio(wallet)`: one of the account's own agent wallets (any
 * other address is 404, like a missing one), its holdings with numbers as numbers (`balance` in
 * base units, `uiBalance` in whole tokens; an amount past 2^53 base units loses precision as a
 * JSON number, the exact figure is in GET /wallet/portfolio), names and 24 h changes from the
 * index, and the PnL fields per holding and in total.
 *
 * @example
 * const p = await getWalletPortfolio(deps, { accountId, wallet: '0xabc…' })
 * p.holdings[0] // { mint: null, symbol: 'ETH', name: 'Ether', balance: 1e18, uiBalance: 1, valueUsd: 3000, ... }
 */
export async function getWalletPortfolio(deps: GetWalletPortfolioDeps, input: GetWalletPortfolioInput) {
  const agentId = await deps.portfolio.agentIdByWallet(input.accountId, input.wallet)
  if (!agentId) throw new NotFoundError('Wallet')
  const [{ agent, lines, totals, totalValueUsd }, facts] = await Promise.all([portfolioLines(deps, { accountId: input.accountId, agentId }), deps.tokenFacts()])
  return {
    wallet: agent.walletAddress,
    agentId: agent.id,
    totalValueUsd: Number(totalValueUsd),
    holdings: lines.map(({ token, balance, holding, position }) => {
      const fact = facts.get(token.address.toLowerCase())
      const pnl = pnlFields(position, holding.valueUsd)
      return {
        mint: token.native ? null : token.address.toLowerCase(),
        symbol: token.symbol,
        // Native ETH's address is WETH's: its change is WETH's, its name its own.
        name: (token.native ? undefined : fact?.name) ?? QUOTE_NAMES[token.symbol] ?? token.symbol,
        balance: Number(balance),
        uiBalance: Number(formatUnits(balance, token.decimals)),
        valueUsd: num(holding.valueUsd),
        priceUsd: num(holding.priceUsd),
        change24h: fact?.change24h ?? null,
        costBasisUsd: num(pnl.costBasisUsd),
        unrealisedPnlUsd: num(pnl.unrealisedPnlUsd),
        realisedPnlUsd: num(pnl.realisedPnlUsd),
      }
    }),
    costBasisUsd: Number(totals.costBasisUsd),
    unrealisedPnlUsd: Number(totals.unrealisedPnlUsd),
    realisedPnlUsd: Number(totals.realisedPnlUsd),
    gasUsd: Number(totals.gasUsd),
  }
}

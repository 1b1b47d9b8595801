/** Below this total value in USD an agent's wallet is flagged low (it can hardly trade). */
export const LOW_BALANCE_USD = 10
/** Below this much ETH the wallet cannot pay gas for long. */
export const LOW_GAS_ETH = 0.005
/** Below this many free credits (1 credit = 0.001 USD) the account's model calls are about to be refused. */
export const LOW_CREDITS = 1000

export type AgentFlagsInput = {
  portfolio: { totalValueUsd: string | null; holdings: { symbol: string; address: string | null; balance: string }[]; /** A paper agent pays no gas: no low-gas flag. */ mode?: string } | null
  credits: { credits: number; reserved: number }
}

/**
 * The warnings on an agent's card: a low balance (little value, or too little ETH for gas) and
 * low credits on its account. Without a portfolio (no chain) the balance flag is null: unknown.
 *
 * @example
 * agentFlags({ portfolio: { totalValueUsd: '3.20', holdings: [] }, credits: { credits: 50_000, reserved: 0 } })
 * // { lowBalance: true, lowCredits: false }
 */
export function agentFlags({ portfolio, credits }: AgentFlagsInput): { lowBalance: boolean | null; lowCredits: boolean } {
  const lowCredits = credits.credits - credits.reserved < LOW_CREDITS
  if (!portfolio) return { lowBalance: null, lowCredits }
  const eth = portfolio.holdings.find((h) => h.address === null)
  const lowGas = portfolio.mode !== 'paper' && Number(eth?.balance ?? 0) < LOW_GAS_ETH
  return { lowBalance: Number(portfolio.totalValueUsd ?? 0) < LOW_BALANCE_USD || lowGas, lowCredits }
}

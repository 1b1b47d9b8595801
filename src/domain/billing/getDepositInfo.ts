import { CREDITS_PER_USD } from './modelCallCredits.ts'
import type { DepositAsset } from './depositCredits.ts'

/** A transfer to the deposit address that the indexer saw and that waits for its confirmations. */
export type PendingDeposit = {
  asset: DepositAsset
  /** Decimal string in whole units. */
  amount: string
  txHash: string
  logIndex: number
  blockNumber: number
  confirmations: number
}

export type DepositTerms = {
  chainId: number
  confirmations: number
  usdc: { address: string; decimals: number }
}

export type GetDepositInfoDeps = {
  terms: DepositTerms
  /** The account's deposit address, made on first call (two calls at once get the same one). */
  depositAddress(accountId: string): Promise<string>
  pendingDeposits(accountId: string): Promise<PendingDeposit[]>
}

/**
 * Where and how an account buys credits on chain: its own deposit address, the assets accepted,
 * the rate, and the confirmations a transfer needs before it is credited.
 *
 * @example
 * const info = await getDepositInfo(deps, { accountId })
 */
export async function getDepositInfo(deps: GetDepositInfoDeps, { accountId }: { accountId: string }) {
  const address = await deps.depositAddress(accountId)
  const { chainId, confirmations, usdc } = deps.terms
  return {
    address,
    chainId,
    assets: [
      { symbol: 'ETH', address: null, decimals: 18 },
      { symbol: 'USDC', address: usdc.address.toLowerCase(), decimals: usdc.decimals },
    ],
    creditsPerUsd: CREDITS_PER_USD,
    rate: {
      USDC: 'credited at 1 USD per USDC',
      ETH: "credited at the WETH/USDC pool's price at the deposit's block",
      rounding: 'credits = floor(USD value x creditsPerUsd)',
    },
    confirmations,
    pending: await deps.pendingDeposits(accountId),
  }
}

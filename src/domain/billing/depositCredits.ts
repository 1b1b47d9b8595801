import { CREDITS_PER_USD } from './modelCallCredits.ts'

/** Assets the indexer credits when sent to an account's deposit address. */
export const DEPOSIT_ASSETS = ['ETH', 'USDC'] as const
export type DepositAsset = (typeof DEPOSIT_ASSETS)[number]

const USD18 = 10n ** 18n

/**
 * What a deposit is worth: its USD value (usd18) and the credits it buys, rounded down
 * (1 credit = 0.001 USD). `unitUsd18` is the USD price of one whole unit at the deposit's block
 * (USDC 1e18; ETH from the WETH/USDC pool).
 *
 * @example
 * depositCredits({ amount: 10_000_000n, decimals: 6, unitUsd18: 10n ** 18n }) // { usd18: 10n * 10n ** 18n, credits: 10000 }
 */
export function depositCredits({ amount, decimals, unitUsd18 }: { amount: bigint; decimals: number; unitUsd18: bigint }): { usd18: bigint; credits: number } {
  if (amount < 0n || unitUsd18 < 0n) throw new RangeError('amount and price must not be negative')
  const usd18 = (amount * unitUsd18) / 10n ** BigInt(decimals)
  return { usd18, credits: Number((usd18 * BigInt(CREDITS_PER_USD)) / USD18) }
}

/** A deposit's ledger ref: unique per transfer on a chain (log index -1 for a plain ETH transfer). */
export function depositRef({ chainId, txHash, logIndex }: { chainId: number; txHash: string; logIndex: number }): string {
  return `${chainId}:${txHash.toLowerCase()}:${logIndex}`
}

import { CREDITS_PER_USD } from './modelCallCredits.ts'
import type { CreditsRepository } from './ports.ts'

export type GetBillingDeps = { credits: CreditsRepository; now?: () => Date }

export type Billing = { credits: number; reserved: number; spentToday: number; spentThisMonth: number; creditsPerUsd: number }

/**
 * An account's credits: the balance, what is held by calls in flight, and what was spent
 * (debited) since the start of the UTC day and month.
 *
 * @example
 * const { credits, reserved } = await getBilling(deps, { accountId })
 */
export async function getBilling(deps: GetBillingDeps, { accountId }: { accountId: string }): Promise<Billing> {
  const now = deps.now?.() ?? new Date()
  const day = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()))
  const month = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1))
  const [balance, spent] = await Promise.all([deps.credits.balance(accountId), deps.credits.spentSince(accountId, { day, month })])
  return { credits: balance.credits, reserved: balance.reserved, spentToday: spent.day, spentThisMonth: spent.month, creditsPerUsd: CREDITS_PER_USD }
}

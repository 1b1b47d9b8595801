import type { CreateAccountDeps } from './createAccount.ts'
import type { Account } from './ports.ts'

/**
 * The account of a signing address, created (with its starter credits) on its first sign-in.
 * Two first sign-ins at once: the unique address index lets one create it, the other reads it.
 *
 * @example
 * const account = await findOrCreateAccount(deps, { address: '0xabc...' })
 */
export async function findOrCreateAccount(deps: CreateAccountDeps, { address }: { address: string }): Promise<Account> {
  const existing = await deps.accounts.findByAddress(address)
  if (existing) return existing
  try {
    return await deps.accounts.create({ name: address, isOperator: false, address, starterCredits: deps.starterCredits })
  } catch (err) {
    const again = await deps.accounts.findByAddress(address)
    if (!again) throw err
    return again
  }
}

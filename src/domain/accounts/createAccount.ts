import { accountView, type AccountView } from './accountViews.ts'
import { createApiKey } from './createApiKey.ts'
import type { AccountsRepository } from './ports.ts'

export type CreateAccountDeps = {
  accounts: AccountsRepository
  /** Credits granted to every new account, in the transaction that creates it (STARTER_CREDITS). */
  starterCredits: number
}

/**
 * Creates an account with its starter credits and a first key with every scope (the admin CLI
 * and the tests make accounts this way; the dashboard's come from sign-in).
 *
 * @example
 * const { account, apiKey } = await createAccount(deps, { name: 'ops', isOperator: true })
 */
export async function createAccount(
  deps: CreateAccountDeps,
  { name, isOperator = false }: { name: string; isOperator?: boolean },
): Promise<{ account: AccountView; apiKey: string }> {
  const account = await deps.accounts.create({ name, isOperator, address: null, starterCredits: deps.starterCredits })
  const { key } = await createApiKey(deps, { accountId: account.id, name: 'initial', scopes: ['read', 'trade', 'admin'] })
  return { account: accountView(account), apiKey: key }
}

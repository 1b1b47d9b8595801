import { NotFoundError } from '../errors.ts'
import { accountView, type AccountView } from './accountViews.ts'
import type { AccountsRepository } from './ports.ts'

/**
 * The caller's account (profile and credit balance).
 *
 * @example
 * const me = await getAccount({ accounts }, { accountId })
 */
export async function getAccount(deps: { accounts: AccountsRepository }, { accountId }: { accountId: string }): Promise<AccountView> {
  const account = await deps.accounts.find(accountId)
  if (!account) throw new NotFoundError('Account')
  return accountView(account)
}

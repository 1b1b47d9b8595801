import { NotFoundError } from '../errors.ts'
import { accountView, type AccountView } from './accountViews.ts'
import type { ProfileBody } from './account.schema.ts'
import type { AccountsRepository } from './ports.ts'

/**
 * Changes the caller's profile (its name); an empty patch answers the account as it is.
 *
 * @example
 * const me = await updateAccount({ accounts }, { accountId, name: 'desk' })
 */
export async function updateAccount(deps: { accounts: AccountsRepository }, { accountId, ...patch }: ProfileBody & { accountId: string }): Promise<AccountView> {
  const account = patch.name === undefined ? await deps.accounts.find(accountId) : await deps.accounts.rename(accountId, patch.name)
  if (!account) throw new NotFoundError('Account')
  return accountView(account)
}

import { apiKeyView, type ApiKeyView } from './accountViews.ts'
import type { AccountsRepository, KeyPage } from './ports.ts'

/**
 * The account's keys, newest first (never a value or hash); `last` is the cursor position of the
 * page's last key when more follow.
 *
 * @example
 * const { keys, last } = await listApiKeys({ accounts }, { accountId, limit: 20 })
 */
export async function listApiKeys(
  deps: { accounts: AccountsRepository },
  { accountId, limit, after }: { accountId: string } & KeyPage,
): Promise<{ keys: ApiKeyView[]; last: { createdAt: Date; id: string } | undefined }> {
  const rows = await deps.accounts.listKeys(accountId, { limit: limit + 1, after })
  const page = rows.slice(0, limit)
  const last = rows.length > limit ? page.at(-1) : undefined
  return { keys: page.map(apiKeyView), last: last && { createdAt: last.createdAt, id: last.id } }
}

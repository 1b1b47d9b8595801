import { NotFoundError } from '../errors.ts'
import { apiKeyView, type ApiKeyView } from './accountViews.ts'
import type { KeyCache } from './keyCache.ts'
import type { AccountsRepository } from './ports.ts'

export type RevokeApiKeyDeps = {
  accounts: AccountsRepository
  keyCache: KeyCache
  /** Tells the other nodes, so that they drop the key from their caches too. */
  publishRevoked?: ((hash: string) => void) | undefined
}

/**
 * Deletes one of the account's keys; it stops working at once on this node and, through
 * `publishRevoked`, on the others.
 *
 * @example
 * const key = await revokeApiKey(deps, { accountId, keyId })
 */
export async function revokeApiKey(deps: RevokeApiKeyDeps, { accountId, keyId }: { accountId: string; keyId: string }): Promise<ApiKeyView> {
  const key = await deps.accounts.deleteKey(accountId, keyId)
  if (!key) throw new NotFoundError('API key')
  deps.keyCache.revoke(key.hash)
  deps.publishRevoked?.(key.hash)
  return apiKeyView(key)
}

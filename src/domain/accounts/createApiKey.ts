import { ValidationError } from '../errors.ts'
import { generateApiKey } from './apiKeyFormat.ts'
import { apiKeyView, type ApiKeyView } from './accountViews.ts'
import type { AccountsRepository } from './ports.ts'
import type { Scope } from './scopes.ts'

export type CreateApiKeyInput = { accountId: string; name: string; scopes: Scope[]; expiresAt?: Date | null | undefined }

/**
 * Creates a key for the account. Only its hash and hint are stored: the answer's `key` is the
 * one time its value is ever shown.
 *
 * @example
 * const { key } = await createApiKey({ accounts }, { accountId, name: 'bot', scopes: ['read', 'trade'] })
 */
export async function createApiKey(deps: { accounts: AccountsRepository }, input: CreateApiKeyInput): Promise<ApiKeyView & { key: string }> {
  const expiresAt = input.expiresAt ?? null
  if (expiresAt && expiresAt.getTime() <= Date.now()) throw new ValidationError({ expiresAt: 'Must be in the future.' })
  const generated = generateApiKey()
  const key = await deps.accounts.insertKey({
    accountId: input.accountId, name: input.name, hash: generated.hash, hint: generated.hint, scopes: [...new Set(input.scopes)], expiresAt,
  })
  return { ...apiKeyView(key), key: generated.value }
}

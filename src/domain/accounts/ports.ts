import type { Account } from './account.entity.ts'
import type { ApiKey } from './apiKey.entity.ts'
import type { Session } from './session.entity.ts'
import type { Scope } from './scopes.ts'

export type { Account, ApiKey, Session }

/** A key to store: only its hash and display hint, never its value. */
export type NewApiKey = { accountId: string; name: string; hash: string; hint: string; scopes: Scope[]; expiresAt: Date | null }

export type KeyPage = { limit: number; after?: { createdAt: string; id: string } | undefined }

/**
 * The account aggregate's storage: accounts and their API keys (implemented over MikroORM in
 * src/adapters/db/accounts.repository.ts). A use case's unit test can pass a plain in-memory object.
 */
export interface AccountsRepository {
  find(accountId: string): Promise<Account | undefined>
  findByAddress(address: string): Promise<Account | undefined>
  /** Creates the account and its starter grant (ledger ref = the account id) in one transaction. */
  create(input: { name: string; isOperator: boolean; address: string | null; starterCredits: number }): Promise<Account>
  /** Renames the account; undefined when there is none. */
  rename(accountId: string, name: string): Promise<Account | undefined>
  insertKey(key: NewApiKey): Promise<ApiKey>
  /** The key stored under this hash and its account; undefined when either is gone. */
  findKeyByHash(hash: string): Promise<{ key: ApiKey; account: Account } | undefined>
  /** The account's keys, newest first, at most `limit`, after the cursor when given. */
  listKeys(accountId: string, page: KeyPage): Promise<ApiKey[]>
  /** Deletes the account's key; undefined when it has none with this id. */
  deleteKey(accountId: string, keyId: string): Promise<ApiKey | undefined>
  /** Records a key's last use (best effort: a failure is ignored). */
  touchKey(keyId: string, at: Date): void
}

/** Sign-in nonces and dashboard sessions (src/adapters/db/sessions.repository.ts). */
export interface SessionsRepository {
  /** Stores a single-use nonce valid for `ttlSeconds` (the database clock), sweeping expired ones. */
  insertNonce(nonce: string, ttlSeconds: number): Promise<void>
  /** Deletes the nonce if it exists and has not expired; true when it did. */
  consumeNonce(nonce: string): Promise<boolean>
  insertSession(session: { idHash: string; accountId: string; csrfToken: string; expiresAt: Date }): Promise<void>
  findSession(idHash: string): Promise<Session | undefined>
  deleteSession(idHash: string): Promise<void>
}

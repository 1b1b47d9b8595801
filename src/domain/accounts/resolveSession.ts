import type { AccountsRepository, SessionsRepository } from './ports.ts'
import type { Principal } from './scopes.ts'
import { isSessionTokenShaped, sessionIdHash } from './sessionToken.ts'

/**
 * The principal of a session cookie (every scope, and the CSRF token its writes must carry);
 * undefined for an unknown or expired session or a deleted account.
 *
 * @example
 * const principal = await resolveSession({ accounts, sessions }, { token })
 */
export async function resolveSession(
  deps: { accounts: AccountsRepository; sessions: SessionsRepository },
  { token }: { token: string },
): Promise<Principal | undefined> {
  if (!isSessionTokenShaped(token)) return undefined
  const session = await deps.sessions.findSession(sessionIdHash(token))
  if (!session || session.expiresAt.getTime() <= Date.now()) return undefined
  const account = await deps.accounts.find(session.accountId)
  if (!account) return undefined
  return {
    accountId: account.id,
    isOperator: account.isOperator,
    scopes: ['read', 'trade', 'admin'],
    via: 'session',
    ...(account.address ? { address: account.address } : {}),
    csrfToken: session.csrfToken,
  }
}

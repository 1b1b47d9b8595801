import type { AccountsRepository, SessionsRepository } from './ports.ts'
import type { Principal } from './scopes.ts'
import { isSessionTokenShaped, sessionIdHash } from './sessionToken.ts'

type SessionDeps = { accounts: AccountsRepository; sessions: SessionsRepository }

/**
 * The principal of a session cookie (every scope, and the CSRF token its writes must carry);
 * undefined for an unknown or expired session or a deleted account.
 *
 * @example
 * const principal = await resolveSession({ accounts, sessions }, { token })
 */
export async function resolveSession(deps: SessionDeps, { token }: { token: string }): Promise<Principal | undefined> {
  return (await liveSession(deps, token))?.principal
}

/** What `GET /auth/session` answers: who the cookie signs in, until when, and the CSRF token its writes must carry. */
export type SessionView = { accountId: string; address: string | null; isOperator: boolean; expiresAt: string; csrfToken: string }

/**
 * The signed-in session of a cookie, for a page that cannot read the HttpOnly cookie nor keep the
 * CSRF token across reloads (the operator console); undefined as `resolveSession`.
 *
 * @example
 * const session = await describeSession({ accounts, sessions }, { token }) // { accountId, address, expiresAt, csrfToken, ... }
 */
export async function describeSession(deps: SessionDeps, { token }: { token: string }): Promise<SessionView | undefined> {
  const live = await liveSession(deps, token)
  if (!live) return undefined
  const { principal, expiresAt } = live
  return { accountId: principal.accountId, address: principal.address ?? null, isOperator: principal.isOperator, expiresAt: expiresAt.toISOString(), csrfToken: principal.csrfToken! }
}

async function liveSession(deps: SessionDeps, token: string): Promise<{ principal: Principal; expiresAt: Date } | undefined> {
  if (!isSessionTokenShaped(token)) return undefined
  const session = await deps.sessions.findSession(sessionIdHash(token))
  if (!session || session.expiresAt.getTime() <= Date.now()) return undefined
  const account = await deps.accounts.find(session.accountId)
  if (!account) return undefined
  const principal: Principal = {
    accountId: account.id,
    isOperator: account.isOperator,
    scopes: ['read', 'trade', 'admin'],
    via: 'session',
    ...(account.address ? { address: account.address } : {}),
    csrfToken: session.csrfToken,
  }
  return { principal, expiresAt: session.expiresAt }
}

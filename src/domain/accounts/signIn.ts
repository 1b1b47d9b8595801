import { verifyMessage } from 'viem'
import { parseSiweMessage, validateSiweMessage } from 'viem/siwe'
import { UnauthorizedError, ValidationError } from '../errors.ts'
import { accountView, type AccountView } from './accountViews.ts'
import type { SiweBody } from './account.schema.ts'
import type { CreateAccountDeps } from './createAccount.ts'
import { findOrCreateAccount } from './findOrCreateAccount.ts'
import type { SessionsRepository } from './ports.ts'
import { newCsrfToken, newSessionToken, sessionIdHash } from './sessionToken.ts'

export type SignInDeps = CreateAccountDeps & { sessions: SessionsRepository; chainId: number; sessionTtlSeconds: number }
export type SignInInput = SiweBody & {
  /** The domains a message may name (ours, from configuration: never the request's Host header). */
  domains: readonly string[]
}

/**
 * Dashboard sign-in by Sign-In with Ethereum (EIP-4361): a message whose domain is ours, an EOA
 * signature, a nonce consumed once; the account is the signing address's (created on first
 * sign-in). Answers the session token (the cookie) and its CSRF token.
 *
 * @example
 * const { token, csrfToken, account } = await signIn(deps, { message, signature, domains: ['app.example'] })
 */
export async function signIn(deps: SignInDeps, { message, signature, domains }: SignInInput): Promise<{ token: string; csrfToken: string; account: AccountView }> {
  const parsed = parseSiweMessage(message)
  if (!parsed.address || !parsed.nonce || !parsed.domain) throw new ValidationError({ message: 'Not an EIP-4361 message.' })
  if (!domains.includes(parsed.domain)) throw new UnauthorizedError(`Message domain must be ${domains.join(' or ')}.`)
  const domain = parsed.domain
  if (parsed.chainId !== undefined && parsed.chainId !== deps.chainId) throw new UnauthorizedError(`Message chain id must be ${deps.chainId}.`)
  if (!validateSiweMessage({ message: parsed, domain })) throw new UnauthorizedError('Message expired or not yet valid.')
  const valid = await verifyMessage({ address: parsed.address, message, signature }).catch(() => false)
  if (!valid) throw new UnauthorizedError('Signature does not match the message address.')
  // Single use: the nonce is consumed only by a message that verified.
  if (!(await deps.sessions.consumeNonce(parsed.nonce))) throw new UnauthorizedError('Unknown, used or expired nonce.')
  const account = await findOrCreateAccount(deps, { address: parsed.address.toLowerCase() })
  const token = newSessionToken()
  const csrfToken = newCsrfToken()
  await deps.sessions.insertSession({
    idHash: sessionIdHash(token), accountId: account.id, csrfToken, expiresAt: new Date(Date.now() + deps.sessionTtlSeconds * 1000),
  })
  return { token, csrfToken, account: accountView(account) }
}

import { createHash, randomBytes } from 'node:crypto'
import type { EntityManager } from '@mikro-orm/core'
import { verifyMessage } from 'viem'
import { generateSiweNonce, parseSiweMessage, validateSiweMessage } from 'viem/siwe'
import { SessionSchema } from './session.entity.ts'
import type { AccountsService } from './accounts.service.ts'
import type { Principal } from './scopes.ts'
import { UnauthorizedError, ValidationError } from '../errors.ts'

export type SessionsDeps = {
  em: EntityManager
  accounts: AccountsService
  chainId: number
  sessionTtlSeconds: number
  nonceTtlSeconds: number
}

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex')

export type SessionsService = ReturnType<typeof createSessionsService>

/**
 * Dashboard sessions by Sign-In with Ethereum (EIP-4361): a single-use nonce, a message whose
 * domain must be ours, an EOA signature; the account is the signing address.
 *
 * @example
 * const { nonce } = await sessions.issueNonce()
 * const { token, csrfToken } = await sessions.signIn({ message, signature, domains: ['app.example'] })
 */
export function createSessionsService(deps: SessionsDeps) {
  const conn = () => deps.em.fork().getConnection()

  return {
    async issueNonce() {
      const nonce = generateSiweNonce()
      await conn().execute(
        `insert into siwe_nonce (nonce, expires_at) values (?, now() + ? * interval '1 second')`,
        [nonce, deps.nonceTtlSeconds],
      )
      // Expired nonces are swept as new ones are issued.
      void conn().execute(`delete from siwe_nonce where expires_at < now()`).catch(() => {})
      return { nonce, chainId: deps.chainId }
    },

    async signIn({ message, signature, domains }: { message: string; signature: `0x${string}`; domains: readonly string[] }) {
      const parsed = parseSiweMessage(message)
      if (!parsed.address || !parsed.nonce || !parsed.domain) {
        throw new ValidationError({ message: 'Not an EIP-4361 message.' })
      }
      if (!domains.includes(parsed.domain)) throw new UnauthorizedError(`Message domain must be ${domains.join(' or ')}.`)
      const domain = parsed.domain
      if (parsed.chainId !== undefined && parsed.chainId !== deps.chainId) {
        throw new UnauthorizedError(`Message chain id must be ${deps.chainId}.`)
      }
      if (!validateSiweMessage({ message: parsed, domain })) throw new UnauthorizedError('Message expired or not yet valid.')
      const valid = await verifyMessage({ address: parsed.address, message, signature }).catch(() => false)
      if (!valid) throw new UnauthorizedError('Signature does not match the message address.')
      // Single use: the nonce is consumed only by a message that verified.
      const consumed = await conn().execute(
        `delete from siwe_nonce where nonce = ? and expires_at > now() returning nonce`,
        [parsed.nonce],
      )
      if (consumed.length === 0) throw new UnauthorizedError('Unknown, used or expired nonce.')
      const account = await deps.accounts.findOrCreateByAddress(parsed.address.toLowerCase())
      const token = randomBytes(32).toString('base64url')
      const csrfToken = randomBytes(24).toString('base64url')
      const em = deps.em.fork()
      em.create(SessionSchema, {
        idHash: sha256(token),
        accountId: account.id,
        csrfToken,
        expiresAt: new Date(Date.now() + deps.sessionTtlSeconds * 1000),
      })
      await em.flush()
      return { token, csrfToken, account }
    },

    async resolve(token: string): Promise<Principal | undefined> {
      if (!/^[A-Za-z0-9_-]{43}$/.test(token)) return undefined
      const session = await deps.em.fork().findOne(SessionSchema, { idHash: sha256(token) })
      if (!session || session.expiresAt.getTime() <= Date.now()) return undefined
      const account = await deps.accounts.getAccount(session.accountId).catch(() => undefined)
      if (!account) return undefined
      return {
        accountId: account.id,
        isOperator: account.isOperator,
        scopes: ['read', 'trade', 'admin'],
        via: 'session',
        ...(account.address ? { address: account.address } : {}),
        csrfToken: session.csrfToken,
      }
    },

    async signOut(token: string) {
      await deps.em.fork().nativeDelete(SessionSchema, { idHash: sha256(token) })
    },
  }
}

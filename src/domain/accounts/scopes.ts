import { z } from 'zod'

/** `read`: GET anything of the account. `trade`: move money and steer agents. `admin`: keys, profile, whitelists. */
export const SCOPES = ['read', 'trade', 'admin'] as const
export const scopeSchema = z.enum(SCOPES)
export type Scope = z.infer<typeof scopeSchema>

/** Who is calling: resolved once per request by the auth middleware. */
export type Principal = {
  accountId: string
  isOperator: boolean
  scopes: readonly Scope[]
  via: 'key' | 'session'
  keyId?: string
  /** A session's signing address (the account's address). */
  address?: string
  csrfToken?: string
}

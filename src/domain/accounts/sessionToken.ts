import { createHash, randomBytes } from 'node:crypto'

/** Sessions are stored by the SHA-256 of their token: a database read does not reveal a usable cookie. */
export const sessionIdHash = (token: string) => createHash('sha256').update(token).digest('hex')

/** A session token: 32 random bytes, base64url (43 characters). */
export const newSessionToken = () => randomBytes(32).toString('base64url')

export const newCsrfToken = () => randomBytes(24).toString('base64url')

/** True for a string that can be a session token; anything else is refused without a read. */
export const isSessionTokenShaped = (token: string) => /^[A-Za-z0-9_-]{43}$/.test(token)

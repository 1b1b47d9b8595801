import { z } from 'zod'
import { text } from '../util/text.ts'
import { scopeSchema } from './scopes.ts'

/** POST /me: the profile fields the owner may change. */
export const profileBody = z.strictObject({ name: text({ min: 1, max: 64, trim: true }) }).partial()
export type ProfileBody = z.output<typeof profileBody>

/** POST /keys. */
export const createKeyBody = z.strictObject({
  name: text({ min: 1, max: 64, trim: true }),
  scopes: z.array(scopeSchema).min(1).default(['read', 'trade']),
  expiresAt: z.iso.datetime({ offset: true }).optional(),
})
export type CreateKeyBody = z.output<typeof createKeyBody>

/** POST /auth/siwe: an EIP-4361 message and its signature. */
export const siweBody = z.strictObject({
  message: z.string().min(1).max(4000),
  signature: z.string().regex(/^0x[0-9a-fA-F]+$/, 'A 0x-prefixed hex signature.').transform((s) => s as `0x${string}`),
})
export type SiweBody = z.output<typeof siweBody>

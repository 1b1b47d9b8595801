import { z } from 'zod'
import { text } from '../util/text.ts'

/** The body of POST /agents/:id/clone: the clone's name (default `"<name> (copy)"`). */
export const cloneAgentBody = z.strictObject({ name: text({ min: 1, max: 64, trim: true }).optional() })

/** The body of POST /agents/:id/paper/deposit: a token (symbol or address) and a decimal amount in whole units. */
export const paperDepositBody = z.strictObject({
  token: text({ min: 1, max: 64 }),
  amount: z
    .string()
    .regex(/^\d{1,30}(\.\d{1,36})?$/, 'A decimal amount such as "1000".')
    .refine((v) => /[1-9]/.test(v), 'Must be greater than 0.'),
})
export type PaperDepositBody = z.infer<typeof paperDepositBody>

import { z } from 'zod'
import { text } from '../util/text.ts'

/**
 * Launch request bodies (camelCase). `quote` is checked against the venue's quote assets by the
 * service; `seedAmount` applies to self-funded launches only.
 */
export const launchBody = z.strictObject({
  agentId: z.uuid('Must be an agent id.'),
  symbol: z.string().regex(/^[A-Z0-9]{1,11}$/, '1-11 characters of A-Z and 0-9.'),
  name: text({ min: 1, max: 32, trim: true }),
  description: text({ max: 1000 }).optional(),
  logoUrl: z
    .url({ protocol: /^https$/, message: 'An https URL.' })
    .max(2048, 'At most 2048 characters.')
    .optional(),
  quote: z.string().min(1).max(11),
  seedAmount: z
    .string()
    .regex(/^\d{1,12}(\.\d{1,18})?$/, 'A decimal amount of the quote asset, e.g. "0.5".')
    .optional(),
})
export type LaunchBody = z.infer<typeof launchBody>

export const previewBody = launchBody.extend({ venue: z.enum(['venue-a', 'venue-b', 'self-funded']) })

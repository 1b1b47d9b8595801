import { z } from 'zod'

/** The longest chat message accepted, in characters. */
export const MAX_CHAT_MESSAGE_CHARS = 8000

/** `POST /agents/:id/chat`. */
export const chatRequestSchema = z.strictObject({
  message: z.string().trim().min(1, 'Must not be empty.').max(MAX_CHAT_MESSAGE_CHARS, `At most ${MAX_CHAT_MESSAGE_CHARS} characters.`),
  model: z.string().min(1).max(100).optional(),
  temperature: z.number().min(0, 'Between 0 and 2.').max(2, 'Between 0 and 2.').optional(),
  stream: z.boolean().optional(),
})
export type ChatRequest = z.infer<typeof chatRequestSchema>

/** `GET /agents/:id/messages`. */
export const listMessagesQuerySchema = z.strictObject({
  // A plain decimal integer (as the other lists: `0x10` and `1e2` are refused).
  limit: z.string().regex(/^[0-9]{1,3}$/, 'An integer from 1 to 100.').transform(Number)
    .pipe(z.number().int().min(1, 'An integer from 1 to 100.').max(100, 'An integer from 1 to 100.')).default(20),
  before: z.iso.datetime({ offset: true }).optional(),
})
/** The history's page as parsed: how many, and before which time. */
export type ListMessagesQuery = { limit: number; before?: string | undefined }

import { z } from 'zod'
import { limitQuery } from '../paging.schema.ts'

/** The account events an endpoint can ask for (docs/api.md, "Events"); `*` asks for all of them. */
export const EVENT_TYPES = [
  'swap.confirmed', 'swap.failed', 'transfer.confirmed', 'transfer.failed', 'launch.live', 'launch.failed',
  'automation.fired', 'automation.failed', 'automation.completed', 'run.completed', 'run.failed',
  'chat.turn.completed', 'chat.turn.failed', 'agent.paused', 'market.listing.sold', 'webhook.disabled',
  'approval.requested', 'approval.decided', 'deposit.credited', 'guardrail.change_requested', 'guardrail.change_applied',
  'credits.low', 'agent.low_balance',
] as const

const eventType = z.enum([...EVENT_TYPES, '*'])
const url = z.string().trim().min(1).max(2000)
const description = z.string().trim().max(500).nullable()

export const createWebhookSchema = z.strictObject({
  url,
  events: z.array(eventType).min(1).max(50).transform((e) => [...new Set(e)]),
  description: description.optional(),
  enabled: z.boolean().default(true),
})
export type CreateWebhookBody = z.infer<typeof createWebhookSchema>

export const updateWebhookSchema = z.strictObject({
  url: url.optional(),
  events: z.array(eventType).min(1).max(50).transform((e) => [...new Set(e)]).optional(),
  description: description.optional(),
  enabled: z.boolean().optional(),
})
export type UpdateWebhookBody = z.infer<typeof updateWebhookSchema>

export const listDeliveriesSchema = z.strictObject({
  limit: limitQuery,
  cursor: z.string().regex(/^[0-9]{1,18}$/, 'Invalid cursor.').optional(),
})
export type ListDeliveriesQuery = z.infer<typeof listDeliveriesSchema>

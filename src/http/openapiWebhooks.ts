import { createWebhookSchema, listDeliveriesSchema, updateWebhookSchema } from '../domain/webhooks/webhook.schema.ts'
import { z } from 'zod'
import type { Op } from './openapiOp.ts'

const nullable = (type: string, extra: object = {}) => ({ type: [type, 'null'], ...extra })
const webhook = {
  type: 'object',
  required: ['id', 'url', 'events', 'enabled', 'description', 'disabledReason', 'createdAt'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    url: { type: 'string' },
    events: { type: 'array', items: { type: 'string' } },
    enabled: { type: 'boolean' },
    description: nullable('string'),
    disabledReason: nullable('string', { description: '`failing`: disabled after failing for 3 days' }),
    failingSince: nullable('string', { format: 'date-time' }),
    previousSecretExpiresAt: nullable('string', { format: 'date-time', description: 'Until then the previous secret signs too' }),
    createdAt: { type: 'string', format: 'date-time' },
    updatedAt: { type: 'string', format: 'date-time' },
  },
}
const withSecret = { allOf: [webhook, { type: 'object', required: ['secret'], properties: { secret: { type: 'string', pattern: '^whsec_', description: 'Shown only here' } } }] }
const delivery = {
  type: 'object',
  required: ['id', 'eventId', 'type', 'status', 'attempts', 'lastStatusCode', 'lastError', 'nextAttemptAt', 'deliveredAt'],
  properties: {
    id: { type: 'string', description: 'The `webhook-id` header, the same on every retry' },
    eventId: { type: 'string' },
    type: { type: 'string' },
    status: { enum: ['pending', 'delivered', 'failed', 'dead'] },
    attempts: { type: 'integer' },
    lastStatusCode: nullable('integer'),
    lastError: nullable('string'),
    latencyMs: nullable('integer'),
    nextAttemptAt: nullable('string', { format: 'date-time' }),
    deliveredAt: nullable('string', { format: 'date-time' }),
    createdAt: { type: 'string', format: 'date-time' },
  },
}

/** Outbound webhooks (`admin` scope) and the stream of the same events (`read`): docs/api.md, "Webhooks". */
export function webhookOps(): Op[] {
  return [
    { method: 'post', path: '/webhooks', summary: 'Add an endpoint (https; private addresses refused): 201 with its signing secret, shown once', auth: 'admin', body: createWebhookSchema, status: 201, idempotency: 'honoured', response: withSecret },
    { method: 'get', path: '/webhooks', summary: "The account's endpoints", auth: 'admin', response: { type: 'object', required: ['webhooks'], properties: { webhooks: { type: 'array', items: webhook } } } },
    { method: 'get', path: '/webhooks/{id}', summary: 'One endpoint', auth: 'admin', response: webhook },
    { method: 'patch', path: '/webhooks/{id}', summary: 'Change the URL, events, description or enabled (re-enabling clears the failure streak)', auth: 'admin', body: updateWebhookSchema, response: webhook },
    { method: 'delete', path: '/webhooks/{id}', summary: 'Remove an endpoint and its deliveries', auth: 'admin', response: webhook },
    { method: 'post', path: '/webhooks/{id}/rotate-secret', summary: 'A new signing secret, shown once; the previous one signs too for 24 h', auth: 'admin', response: withSecret },
    { method: 'post', path: '/webhooks/{id}/test', summary: 'Send a webhook.test event to this endpoint (202)', auth: 'admin', status: 202 },
    {
      method: 'get', path: '/webhooks/{id}/deliveries', summary: "An endpoint's deliveries, newest first", auth: 'admin', query: listDeliveriesSchema,
      response: { type: 'object', required: ['deliveries', 'nextCursor'], properties: { deliveries: { type: 'array', items: delivery }, nextCursor: nullable('string') } },
    },
    { method: 'get', path: '/events', summary: "The account's events as Server-Sent Events (id: the event id, event: its type; Last-Event-ID resumes)", auth: 'read', responseType: 'text/event-stream' },
    { method: 'post', path: '/webhooks/{id}/deliveries/{deliveryId}/redeliver', summary: 'Send a delivery again now, under the same webhook-id', auth: 'admin', response: delivery },
    {
      method: 'post', path: '/hooks/automations/{id}/{token}', status: 202, bodyOptional: true,
      summary: "A signal webhook in (no API key): fires the automation once per message id (webhook-id, or the body's id); Standard Webhooks signature unless the trigger's auth is token; 401 invalid_signature, 422 naming the field, 429 over 30 a minute",
      body: z.record(z.string(), z.unknown()).describe("`id` (without a webhook-id header) and the values the trigger's `values` declare"),
      response: { type: 'object', required: ['automationId', 'messageId', 'accepted', 'duplicate'], properties: { automationId: { type: 'string' }, messageId: { type: 'string' }, accepted: { type: 'boolean' }, duplicate: { type: 'boolean', description: 'This message id was received before: nothing more fired' } } },
    },
  ]
}

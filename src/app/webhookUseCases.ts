import { randomBytes, randomUUID } from 'node:crypto'
import type pg from 'pg'
import { NotFoundError, ValidationError } from '../domain/errors.ts'
import { isoTimestamp } from '../domain/util/isoTimestamp.ts'
import type { CreateWebhookBody, ListDeliveriesQuery, UpdateWebhookBody } from '../domain/webhooks/webhook.schema.ts'
import { createWebhooksStore, type WebhookEndpointRow } from '../adapters/db/webhooks.store.ts'
import { createWebhookDeliveriesStore, type DeliveryRow } from '../adapters/db/webhookDeliveries.store.ts'
import { createAccountEventsStore } from '../adapters/db/accountEvents.store.ts'
import { checkTargetUrl, TargetRefusedError, type TargetPolicy } from '../adapters/webhooks/target.ts'

/** How long the previous secret still signs after a rotation. */
export const ROTATION_GRACE_MS = 24 * 3600 * 1000

const newSecret = () => `whsec_${randomBytes(32).toString('base64')}`
const iso = (d: Date | null) => (d ? isoTimestamp(d) : null)

/** An endpoint as the API shows it (never its secret but on creation and rotation). */
export function endpointView(r: WebhookEndpointRow) {
  return {
    id: r.id,
    url: r.url,
    events: r.events,
    enabled: r.enabled,
    description: r.description,
    disabledReason: r.disabled_reason,
    failingSince: iso(r.failing_since),
    previousSecretExpiresAt: r.previous_secret_until && new Date(r.previous_secret_until) > new Date() ? iso(r.previous_secret_until) : null,
    createdAt: iso(r.created_at),
    updatedAt: iso(r.updated_at),
  }
}

export function deliveryView(r: DeliveryRow) {
  return {
    id: r.id,
    eventId: r.event_id,
    type: r.type,
    status: r.status,
    attempts: r.attempts,
    lastStatusCode: r.last_status_code,
    lastError: r.last_error,
    latencyMs: r.latency_ms,
    nextAttemptAt: iso(r.next_attempt_at),
    deliveredAt: iso(r.delivered_at),
    createdAt: iso(r.created_at),
  }
}

/**
 * The webhook endpoints of an account and their deliveries (`/webhooks`, `admin` scope). A URL is
 * checked when it is set (scheme, and every address its name resolves to: src/adapters/webhooks/target.ts)
 * and again at each delivery.
 */
export function webhookUseCases({ pool, policy, wake }: { pool: pg.Pool; policy: TargetPolicy; wake: () => void }) {
  const store = createWebhooksStore(pool)
  const deliveries = createWebhookDeliveriesStore(pool)
  const checkUrl = async (url: string) => {
    try {
      return (await checkTargetUrl(url, policy)).toString()
    } catch (err) {
      if (err instanceof TargetRefusedError) throw new ValidationError({ url: `Refused: ${err.message}.` })
      throw err
    }
  }
  const owned = async (accountId: string, id: string) => {
    const row = await store.endpoint(accountId, id)
    if (!row) throw new NotFoundError('Webhook')
    return row
  }
  return {
    /** What `GET /events` reads (src/http/accountEventStream.ts). */
    accountEvents: createAccountEventsStore(pool),
    async createWebhook({ accountId, body }: { accountId: string; body: CreateWebhookBody }) {
      const url = await checkUrl(body.url)
      const row = await store.insertEndpoint({ id: randomUUID(), accountId, url, events: body.events, enabled: body.enabled, description: body.description ?? null, secret: newSecret() })
      return { ...endpointView(row), secret: row.secret }
    },
    async listWebhooks({ accountId }: { accountId: string }) {
      return { webhooks: (await store.endpoints(accountId)).map(endpointView) }
    },
    getWebhook: async ({ accountId, webhookId }: { accountId: string; webhookId: string }) => endpointView(await owned(accountId, webhookId)),
    async updateWebhook({ accountId, webhookId, body }: { accountId: string; webhookId: string; body: UpdateWebhookBody }) {
      await owned(accountId, webhookId)
      const url = body.url === undefined ? undefined : await checkUrl(body.url)
      const row = await store.updateEndpoint(accountId, webhookId, { ...body, url })
      if (!row) throw new NotFoundError('Webhook')
      return endpointView(row)
    },
    async deleteWebhook({ accountId, webhookId }: { accountId: string; webhookId: string }) {
      const row = await owned(accountId, webhookId)
      if (!(await store.deleteEndpoint(accountId, webhookId))) throw new NotFoundError('Webhook')
      return { ...endpointView(row), deleted: true }
    },
    async rotateWebhookSecret({ accountId, webhookId }: { accountId: string; webhookId: string }) {
      const row = await store.rotateSecret(accountId, webhookId, newSecret(), ROTATION_GRACE_MS)
      if (!row) throw new NotFoundError('Webhook')
      return { ...endpointView(row), secret: row.secret }
    },
    /** Sends a `webhook.test` event to this endpoint only (sent while it is enabled). */
    async testWebhook({ accountId, webhookId }: { accountId: string; webhookId: string }) {
      const row = await owned(accountId, webhookId)
      const eventId = `evt_${randomUUID().replaceAll('-', '')}`
      await store.insertEvent({ id: eventId, accountId, type: 'webhook.test', data: { webhook: { id: row.id, url: row.url } }, onlyEndpoint: row.id })
      wake()
      return { eventId, type: 'webhook.test' }
    },
    async listDeliveries({ accountId, webhookId, query }: { accountId: string; webhookId: string; query: ListDeliveriesQuery }) {
      await owned(accountId, webhookId)
      const rows = await deliveries.list({ accountId, endpointId: webhookId, limit: query.limit + 1, beforeSeq: query.cursor })
      const page = rows.slice(0, query.limit)
      return { deliveries: page.map(deliveryView), nextCursor: rows.length > query.limit ? page.at(-1)!.event_seq : null }
    },
    async redeliver({ accountId, webhookId, deliveryId }: { accountId: string; webhookId: string; deliveryId: string }) {
      const row = await deliveries.redeliver({ accountId, endpointId: webhookId, deliveryId })
      if (!row) throw new NotFoundError('Delivery')
      wake()
      return deliveryView(row)
    },
  }
}

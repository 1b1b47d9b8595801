import { Router } from '@koa/router'
import type { Context } from 'koa'
import type { AppDeps } from '../appDeps.ts'
import { ok } from '../respond.ts'
import { noBody, parse, rejectQuery, uuidParam } from '../validate.ts'
import { principalOf, requireScope } from '../middleware/auth.ts'
import { NotFoundError } from '../../domain/errors.ts'
import { idempotentCreation } from '../middleware/idempotency.ts'
import { streamAccountEvents } from '../accountEventStream.ts'
import { createWebhookSchema, listDeliveriesSchema, updateWebhookSchema } from '../../domain/webhooks/webhook.schema.ts'

const webhookId = (ctx: Context): string => {
  const id = (ctx.params as Record<string, string | undefined>).id
  if (!uuidParam.safeParse(id).success) throw new NotFoundError('Webhook')
  return id as string
}

/**
 * Outbound webhooks (`admin` scope): `POST /webhooks` (201, with the signing secret, shown only
 * then), `GET /webhooks`, `GET|PATCH|DELETE /webhooks/:id`, `POST /webhooks/:id/rotate-secret`
 * (the new secret; the old one signs too for 24 h), `POST /webhooks/:id/test`,
 * `GET /webhooks/:id/deliveries` (paged) and `POST /webhooks/:id/deliveries/:deliveryId/redeliver`;
 * and `GET /events` (`read`), the same events as Server-Sent Events.
 */
export function webhookRoutes({ webhooks, core }: AppDeps): Router {
  const router = new Router()
  const accountId = (ctx: Context) => principalOf(ctx).accountId

  router.post('/webhooks', rejectQuery, requireScope('admin'), idempotentCreation(core.idempotencyKeys), async (ctx) => {
    ok(ctx, await webhooks.createWebhook({ accountId: accountId(ctx), body: parse(createWebhookSchema, ctx.request.body) }), 201)
  })
  router.get('/webhooks', rejectQuery, requireScope('admin'), async (ctx) => {
    ok(ctx, await webhooks.listWebhooks({ accountId: accountId(ctx) }))
  })
  router.get('/webhooks/:id', rejectQuery, requireScope('admin'), async (ctx) => {
    ok(ctx, await webhooks.getWebhook({ accountId: accountId(ctx), webhookId: webhookId(ctx) }))
  })
  router.patch('/webhooks/:id', rejectQuery, requireScope('admin'), async (ctx) => {
    const id = webhookId(ctx)
    ok(ctx, await webhooks.updateWebhook({ accountId: accountId(ctx), webhookId: id, body: parse(updateWebhookSchema, ctx.request.body ?? {}) }))
  })
  router.delete('/webhooks/:id', rejectQuery, requireScope('admin'), async (ctx) => {
    const id = webhookId(ctx)
    parse(noBody, ctx.request.body)
    ok(ctx, await webhooks.deleteWebhook({ accountId: accountId(ctx), webhookId: id }))
  })
  router.post('/webhooks/:id/rotate-secret', rejectQuery, requireScope('admin'), async (ctx) => {
    const id = webhookId(ctx)
    parse(noBody, ctx.request.body)
    ok(ctx, await webhooks.rotateWebhookSecret({ accountId: accountId(ctx), webhookId: id }))
  })
  router.post('/webhooks/:id/test', rejectQuery, requireScope('admin'), async (ctx) => {
    const id = webhookId(ctx)
    parse(noBody, ctx.request.body)
    ok(ctx, await webhooks.testWebhook({ accountId: accountId(ctx), webhookId: id }), 202)
  })
  router.get('/webhooks/:id/deliveries', requireScope('admin'), async (ctx) => {
    const id = webhookId(ctx)
    ok(ctx, await webhooks.listDeliveries({ accountId: accountId(ctx), webhookId: id, query: parse(listDeliveriesSchema, ctx.query) }))
  })
  router.post('/webhooks/:id/deliveries/:deliveryId/redeliver', rejectQuery, requireScope('admin'), async (ctx) => {
    const id = webhookId(ctx)
    const deliveryId = (ctx.params as Record<string, string | undefined>).deliveryId ?? ''
    if (!/^msg_[0-9a-f]{24}$/.test(deliveryId)) throw new NotFoundError('Delivery')
    parse(noBody, ctx.request.body)
    ok(ctx, await webhooks.redeliver({ accountId: accountId(ctx), webhookId: id, deliveryId }))
  })
  // Server-Sent Events: every event of the account's resources, resumable with Last-Event-ID.
  router.get('/events', rejectQuery, requireScope('read'), async (ctx) => {
    await streamAccountEvents(ctx, webhooks.accountEvents, { accountId: accountId(ctx), pollMs: EVENTS_POLL_MS })
  })
  return router
}

/** How often a stream of account events reads the database. */
const EVENTS_POLL_MS = 250

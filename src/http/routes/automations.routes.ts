import { Router } from '@koa/router'
import type { Context, Next } from 'koa'
import { randomUUID } from 'node:crypto'
import type { AppDeps } from '../appDeps.ts'
import { ok } from '../respond.ts'
import { noBody, parse, rejectQuery, uuidParam } from '../validate.ts'
import { principalOf, requireScope } from '../middleware/auth.ts'
import { idempotency, type IdempotencyState } from '../middleware/idempotency.ts'
import { streamActorEvents } from '../actorEvents.ts'
import { NotFoundError } from '../../domain/errors.ts'
import { createAutomationSchema, listAutomationsSchema, rotateHookSchema, updateAutomationSchema } from '../../domain/automations/automation.schema.ts'

const automationId = (ctx: Context): string => {
  const id = (ctx.params as Record<string, string | undefined>).id
  if (!uuidParam.safeParse(id).success) throw new NotFoundError('Automation')
  return id as string
}

/**
 * Automations (DCA, limit orders, snipers, or any trigger and action): `POST /automations`
 * (201; `Idempotency-Key` honoured: its resource id is the automation id, so a blind retry
 * creates nothing new), `GET /automations?agent_id=&status=` (paged), `GET`, `PATCH` (pause,
 * resume, rename, parameters) and `DELETE` (cancel; answers the automation) on
 * `/automations/:id`, `POST /automations/:id/trigger` (fire now, once) and `POST
 * /automations/:id/hook/rotate` (a signal webhook's new URL and secret).
 */
export function automationRoutes({ core }: AppDeps): Router {
  const router = new Router()
  const account = (ctx: Context) => principalOf(ctx).accountId

  router.post(
    '/automations',
    rejectQuery,
    requireScope('trade'),
    (ctx: Context, next: Next) => idempotency({ keys: core.idempotencyKeys, route: 'automations', required: false })(ctx, next),
    async (ctx: Context) => {
      const body = parse(createAutomationSchema, ctx.request.body)
      const id = (ctx.state.idempotency as IdempotencyState | undefined)?.resourceId ?? randomUUID()
      const created = await core.createAutomation({ accountId: account(ctx), automationId: id, body })
      // A signal webhook's URL, shown once: this service's own address as the client reached it.
      const hook = created.hook ? { url: `${ctx.protocol}://${ctx.host}/api/v1${created.hook.path}`, secret: created.hook.secret } : undefined
      ok(ctx, hook ? { ...created, hook } : created, 201)
    },
  )
  router.get('/automations', requireScope('read'), async (ctx) => {
    ok(ctx, await core.listAutomations({ accountId: account(ctx), query: parse(listAutomationsSchema, ctx.query) }))
  })
  router.get('/automations/:id', rejectQuery, requireScope('read'), async (ctx) => {
    ok(ctx, await core.getAutomation({ accountId: account(ctx), automationId: automationId(ctx) }))
  })
  router.patch('/automations/:id', rejectQuery, requireScope('trade'), async (ctx) => {
    const id = automationId(ctx)
    ok(ctx, await core.updateAutomation({ accountId: account(ctx), automationId: id, body: parse(updateAutomationSchema, ctx.request.body ?? {}) }))
  })
  router.delete('/automations/:id', rejectQuery, requireScope('trade'), async (ctx) => {
    const id = automationId(ctx)
    parse(noBody, ctx.request.body)
    ok(ctx, await core.cancelAutomation({ accountId: account(ctx), automationId: id }))
  })
  // Server-Sent Events: each status as it commits (armed, executing, ...), until completed or cancelled (resumable with Last-Event-ID).
  router.get('/automations/:id/events', rejectQuery, requireScope('read'), async (ctx) => {
    const id = automationId(ctx)
    const read = () => core.getAutomation({ accountId: account(ctx), automationId: id })
    await streamActorEvents(ctx, core.actorEvents, { actorId: id, kind: 'automation', read, isFinal: (s) => s === 'completed' || s === 'cancelled' })
  })
  // A signal webhook's new URL and secret, shown once; the previous pair works for `graceSeconds` (default 1 hour) more.
  router.post('/automations/:id/hook/rotate', rejectQuery, requireScope('trade'), async (ctx) => {
    const id = automationId(ctx)
    const { graceSeconds } = parse(rotateHookSchema, ctx.request.body ?? {})
    const rotated = await core.rotateAutomationHook({ accountId: account(ctx), automationId: id, graceSeconds })
    ok(ctx, { url: `${ctx.protocol}://${ctx.host}/api/v1${rotated.path}`, secret: rotated.secret, previousValidUntil: rotated.previousValidUntil })
  })
  router.post('/automations/:id/trigger', rejectQuery, requireScope('trade'), async (ctx) => {
    const id = automationId(ctx)
    parse(noBody, ctx.request.body)
    ok(ctx, await core.triggerAutomation({ accountId: account(ctx), automationId: id }))
  })
  return router
}

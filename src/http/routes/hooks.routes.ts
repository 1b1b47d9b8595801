import { Router } from '@koa/router'
import type { Context } from 'koa'
import type { AppDeps } from '../appDeps.ts'
import { ok } from '../respond.ts'
import { rejectQuery, uuidParam } from '../validate.ts'
import { rateLimit } from '../rateLimit.ts'
import { NotFoundError } from '../../domain/errors.ts'

/** Messages one automation's signal webhook takes per minute; more are 429 and fire nothing. */
export const HOOK_RATE_LIMIT = { limit: 30, windowSeconds: 60 }

/**
 * Signal webhooks in: `POST /hooks/automations/:id/:token`, no API key (the token in the URL,
 * and a Standard Webhooks signature unless the trigger's `auth` is `token`). 202 `{ automationId,
 * messageId, accepted, duplicate }`; 401 `invalid_signature`, 422 naming the body's field, 409
 * when the automation does not fire now (paused, done), 404 for a wrong id or token: each fires
 * nothing. Rate-limited per automation (HOOK_RATE_LIMIT).
 */
export function hookRoutes({ core, rateLimitStore, logger }: AppDeps): Router {
  const router = new Router()
  const perAutomation = rateLimit({
    store: rateLimitStore,
    policy: { name: 'hook', ...HOOK_RATE_LIMIT },
    keyOf: (ctx) => (ctx as unknown as Context).params?.id,
    failClosed: () => true,
    logger,
  })
  router.post('/hooks/automations/:id/:token', rejectQuery, async (ctx, next) => {
    if (!uuidParam.safeParse(ctx.params.id).success || !/^[A-Za-z0-9_-]{16,64}$/.test(ctx.params.token ?? '')) throw new NotFoundError('Hook')
    await next()
  }, perAutomation, async (ctx) => {
    const { id, token } = ctx.params as { id: string; token: string }
    const answer = await core.receiveAutomationHook({ automationId: id, token, rawBody: ctx.request.rawBody?.toString('utf8') ?? '', headers: ctx.headers, body: ctx.request.body })
    ok(ctx, answer, 202)
  })
  return router
}

import { Router } from '@koa/router'
import type { Context } from 'koa'
import type { AppDeps } from '../appDeps.ts'
import { ok } from '../respond.ts'
import { uuidParam, rejectQuery } from '../validate.ts'
import { principalOf, requireScope } from '../middleware/auth.ts'
import { idempotency, type IdempotencyState } from '../middleware/idempotency.ts'
import { readLaunchRequest, readPreviewRequest, VENUES } from '../../domain/launches/launch.schema.ts'
import { NotFoundError } from '../../domain/errors.ts'

/**
 * Launches: `POST /launch/preview` (nothing sent), `POST /launch/{venue}` for the three kinds
 * (`Idempotency-Key` required; 202 once the launch has started) and `GET /launch/:id` to poll
 * one. Each parses, calls one use case of `core`, answers.
 */
export function launchRoutes({ core, wallet, pool }: AppDeps): Router {
  const router = new Router({ prefix: '/launch' })
  if (!wallet) return router

  router.post('/preview', rejectQuery, requireScope('trade'), async (ctx) => {
    ok(ctx, await core.previewLaunch(readPreviewRequest(principalOf(ctx).accountId, ctx.request.body)))
  })
  for (const venue of VENUES) {
    router.post(
      `/${venue}`,
      requireScope('trade'),
      rejectQuery,
      idempotency({ pool, route: `launch/${venue}`, required: true }),
      async (ctx: Context) => {
        const { resourceId } = ctx.state.idempotency as IdempotencyState
        ok(ctx, await core.launchToken({ ...readLaunchRequest(principalOf(ctx).accountId, venue, ctx.request.body), launchId: resourceId }), 202)
      },
    )
  }
  router.get('/:id', rejectQuery, requireScope('read'), async (ctx) => {
    const id = (ctx.params as { id?: string }).id
    if (!uuidParam.safeParse(id).success) throw new NotFoundError('Launch')
    ok(ctx, await core.getLaunch({ accountId: principalOf(ctx).accountId, launchId: id! }))
  })
  return router
}

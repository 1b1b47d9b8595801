import { Router } from '@koa/router'
import type { Context } from 'koa'
import type { AppDeps } from '../appDeps.ts'
import { ok } from '../respond.ts'
import { uuidParam, rejectQuery } from '../validate.ts'
import { principalOf, requireScope } from '../middleware/auth.ts'
import { idempotency, type IdempotencyState } from '../middleware/idempotency.ts'
import { readLaunchRequest, readPreviewRequest, VENUES } from '../../domain/launches/launch.schema.ts'
import { NotFoundError } from '../../domain/errors.ts'
import { streamActorEvents } from '../actorEvents.ts'
import { launchEnded } from '../../domain/launches/launchResource.ts'
import { launchProgress } from '../../domain/launches/launchRules.ts'

/**
 * Launches: `POST /launch/preview` (nothing sent), `POST /launch/{venue}` for the three kinds
 * (`Idempotency-Key` required; 202 once the launch has started) and `GET /launch/:id` to poll
 * one. Each parses, calls one use case of `core`, answers.
 */
export function launchRoutes({ core }: AppDeps): Router {
  const router = new Router({ prefix: '/launch' })
  if (!core.chainConfigured) return router

  router.post('/preview', rejectQuery, requireScope('trade'), async (ctx) => {
    ok(ctx, await core.previewLaunch(readPreviewRequest(principalOf(ctx).accountId, ctx.request.body)))
  })
  for (const venue of VENUES) {
    router.post(
      `/${venue}`,
      requireScope('trade'),
      rejectQuery,
      idempotency({ keys: core.idempotencyKeys, route: `launch/${venue}`, required: true }),
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
  // Server-Sent Events: each status as it commits, until `live` or `failed` (resumable with Last-Event-ID).
  router.get('/:id/events', rejectQuery, requireScope('read'), async (ctx) => {
    const id = (ctx.params as { id?: string }).id
    if (!uuidParam.safeParse(id).success) throw new NotFoundError('Launch')
    const read = () => core.getLaunch({ accountId: principalOf(ctx).accountId, launchId: id! })
    await streamActorEvents(ctx, core.actorEvents, {
      actorId: id!, kind: 'launch', read, isFinal: launchEnded,
      asOf: (launch, status) => ({ ...launch, status, progress: launchProgress(status, { txHash: launch.txHash, gas: null }) }),
    })
  })
  return router
}

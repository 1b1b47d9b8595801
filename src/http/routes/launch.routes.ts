import { Router } from '@koa/router'
import type { Context } from 'koa'
import type { AppDeps } from '../appDeps.ts'
import { ok } from '../respond.ts'
import { parse, uuidParam, rejectQuery } from '../validate.ts'
import { principalOf, requireScope } from '../middleware/auth.ts'
import { idempotency, type IdempotencyState } from '../middleware/idempotency.ts'
import { launchBody, previewBody } from '../../domain/launches/launch.schema.ts'
import { NotFoundError } from '../../domain/errors.ts'
import type { LaunchVenue } from '../../actors/launch.machine.ts'

/** Launch endpoints: preview (nothing sent), the three launch kinds (202 + poll), and polling. */
export function launchRoutes(deps: AppDeps): Router {
  const router = new Router({ prefix: '/launch' })
  const launches = deps.launches
  if (!launches) return router

  router.post('/preview', rejectQuery, requireScope('trade'), async (ctx) => {
    const { venue, ...body } = parse(previewBody, ctx.request.body)
    ok(ctx, await deps.previewLaunch!(principalOf(ctx).accountId, venue, body))
  })
  for (const venue of ['venue-a', 'venue-b', 'self-funded'] as const satisfies readonly LaunchVenue[]) {
    router.post(
      `/${venue}`,
      requireScope('trade'),
      rejectQuery,
      idempotency({ pool: deps.pool, route: `launch/${venue}`, required: true }),
      async (ctx: Context) => {
        const body = parse(launchBody, ctx.request.body)
        const { resourceId } = ctx.state.idempotency as IdempotencyState
        ok(ctx, await launches.create(principalOf(ctx).accountId, venue, body, resourceId), 202)
      },
    )
  }
  router.get('/:id', rejectQuery, requireScope('read'), async (ctx) => {
    const id = (ctx.params as { id?: string }).id
    if (!uuidParam.safeParse(id).success) throw new NotFoundError('Launch')
    ok(ctx, await launches.get(principalOf(ctx).accountId, id!))
  })
  return router
}

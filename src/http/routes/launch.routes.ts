import { Router } from '@koa/router'
import type { z } from 'zod'
import type { Context } from 'koa'
import type { AppDeps } from '../appDeps.ts'
import { ok } from '../respond.ts'
import { fieldErrorsOf, uuidParam, rejectQuery } from '../validate.ts'
import { principalOf, requireScope } from '../middleware/auth.ts'
import { idempotency, type IdempotencyState } from '../middleware/idempotency.ts'
import { launchBody, previewBody } from '../../domain/launches/launch.schema.ts'
import { NotFoundError, ValidationError } from '../../domain/errors.ts'
import type { LaunchVenue } from '../../actors/launch.machine.ts'

/** Launch endpoints: preview (nothing sent), the three launch kinds (202 + poll), and polling. */
export function launchRoutes(deps: AppDeps): Router {
  const router = new Router({ prefix: '/launch' })
  const launches = deps.launches
  if (!launches) return router

  router.post('/preview', rejectQuery, requireScope('trade'), async (ctx) => {
    // The venue as far as it parses: the account checks of a body with errors need it.
    const named = previewBody.shape.venue.safeParse((ctx.request.body as { venue?: unknown } | undefined)?.venue).data
    const { venue, ...body } = await parseLaunchBody(principalOf(ctx).accountId, named, previewBody, ctx.request.body)
    ok(ctx, await deps.previewLaunch!(principalOf(ctx).accountId, venue, body))
  })
  /**
   * Parses a launch body: a 422 names every bad field at once, those the schema refuses and
   * those the venue or the account refuses (checked for the fields that are well-formed).
   */
  async function parseLaunchBody<T extends z.ZodType>(accountId: string, venue: LaunchVenue | undefined, schema: T, raw: unknown): Promise<z.output<T>> {
    const parsed = schema.safeParse(raw)
    if (parsed.success) return parsed.data
    const shape = fieldErrorsOf(parsed.error)
    const valid = raw !== null && typeof raw === 'object' && !Array.isArray(raw)
      ? Object.fromEntries(Object.entries(raw).filter(([k]) => !(k in shape) && k in launchBody.shape))
      : {}
    const wellFormed = launchBody.partial().safeParse(valid)
    const more = venue && wellFormed.success ? await launches!.accountFieldErrors(accountId, venue, wellFormed.data) : {}
    throw new ValidationError({ ...more, ...shape })
  }

  for (const venue of ['venue-a', 'venue-b', 'self-funded'] as const satisfies readonly LaunchVenue[]) {
    router.post(
      `/${venue}`,
      requireScope('trade'),
      rejectQuery,
      idempotency({ pool: deps.pool, route: `launch/${venue}`, required: true }),
      async (ctx: Context) => {
        const body = await parseLaunchBody(principalOf(ctx).accountId, venue, launchBody, ctx.request.body)
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

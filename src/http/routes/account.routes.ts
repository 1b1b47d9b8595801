import { Router } from '@koa/router'
import { z } from 'zod'
import type { AppDeps } from '../appDeps.ts'
import { ok } from '../respond.ts'
import { decodeCursor, encodeCursor, noBody, pagingQuery, parse, uuidParam, rejectQuery } from '../validate.ts'
import { principalOf, requireScope } from '../middleware/auth.ts'
import { createKeyBody, profileBody } from '../../domain/accounts/account.schema.ts'
import { NotFoundError } from '../../domain/errors.ts'
import { idempotentCreation } from '../middleware/idempotency.ts'

const idParams = z.strictObject({ id: z.string() })

/** Profile and API keys of the caller's own account (the `admin` scope writes them). */
export function accountRoutes({ core }: AppDeps): Router {
  const router = new Router()
  router.get('/me', rejectQuery, requireScope('read'), async (ctx) => {
    ok(ctx, await core.getAccount({ accountId: principalOf(ctx).accountId }))
  })
  router.post('/me', rejectQuery, requireScope('admin'), async (ctx) => {
    const body = parse(profileBody, ctx.request.body ?? {})
    ok(ctx, await core.updateAccount({ ...body, accountId: principalOf(ctx).accountId }))
  })
  router.get('/keys', requireScope('admin'), async (ctx) => {
    const q = parse(pagingQuery, ctx.query)
    const { keys, last } = await core.listApiKeys({ accountId: principalOf(ctx).accountId, limit: q.limit, after: decodeCursor(q.cursor) })
    ok(ctx, { keys, nextCursor: last ? encodeCursor(last.createdAt, last.id) : null })
  })
  router.post('/keys', rejectQuery, requireScope('admin'), idempotentCreation(core.idempotencyKeys), async (ctx) => {
    const body = parse(createKeyBody, ctx.request.body)
    const expiresAt = body.expiresAt ? new Date(body.expiresAt) : null
    // The only time the key's value is ever shown.
    ok(ctx, await core.createApiKey({ accountId: principalOf(ctx).accountId, name: body.name, scopes: body.scopes, expiresAt }), 201)
  })
  router.delete('/keys/:id', rejectQuery, requireScope('admin'), async (ctx) => {
    const { id } = parse(idParams, ctx.params)
    if (!uuidParam.safeParse(id).success) throw new NotFoundError('API key')
    parse(noBody, ctx.request.body)
    ok(ctx, { ...(await core.revokeApiKey({ accountId: principalOf(ctx).accountId, keyId: id })), deleted: true })
  })
  return router
}

import { Router } from '@koa/router'
import { text } from '../../domain/util/text.ts'
import { z } from 'zod'
import type { AppDeps } from '../appDeps.ts'
import { ok } from '../respond.ts'
import { decodeCursor, encodeCursor, pagingQuery, parse, uuidParam, rejectQuery } from '../validate.ts'
import { principalOf, requireScope } from '../middleware/auth.ts'
import { accountView, apiKeyView } from '../../domain/accounts/accounts.service.ts'
import { scopeSchema } from '../../domain/accounts/scopes.ts'
import { NotFoundError, ValidationError } from '../../domain/errors.ts'

export const profileBody = z.strictObject({ name: text({ min: 1, max: 64, trim: true }) }).partial()
export const createKeyBody = z.strictObject({
  name: text({ min: 1, max: 64, trim: true }),
  scopes: z.array(scopeSchema).min(1).default(['read', 'trade']),
  expiresAt: z.iso.datetime({ offset: true }).optional(),
})
const idParams = z.strictObject({ id: z.string() })

/** Profile and API keys of the caller's own account (the `admin` scope writes them). */
export function accountRoutes(deps: AppDeps): Router {
  const router = new Router()
  router.get('/me', rejectQuery, requireScope('read'), async (ctx) => {
    ok(ctx, accountView(await deps.accounts.getAccount(principalOf(ctx).accountId)))
  })
  router.post('/me', rejectQuery, requireScope('admin'), async (ctx) => {
    const body = parse(profileBody, ctx.request.body ?? {})
    ok(ctx, accountView(await deps.accounts.updateAccount(principalOf(ctx).accountId, body)))
  })
  router.get('/keys', requireScope('admin'), async (ctx) => {
    const q = parse(pagingQuery, ctx.query)
    const { keys, more } = await deps.accounts.listApiKeys(principalOf(ctx).accountId, { limit: q.limit, after: decodeCursor(q.cursor) })
    const last = keys.at(-1)
    ok(ctx, { keys: keys.map(apiKeyView), nextCursor: more && last ? encodeCursor(last.createdAt, last.id) : null })
  })
  router.post('/keys', rejectQuery, requireScope('admin'), async (ctx) => {
    const body = parse(createKeyBody, ctx.request.body)
    const expiresAt = body.expiresAt ? new Date(body.expiresAt) : null
    if (expiresAt && expiresAt.getTime() <= Date.now()) throw new ValidationError({ expiresAt: 'Must be in the future.' })
    const { key, value } = await deps.accounts.createApiKey(principalOf(ctx).accountId, { name: body.name, scopes: body.scopes, expiresAt })
    // The only time the key's value is ever shown.
    ok(ctx, { ...apiKeyView(key), key: value }, 201)
  })
  router.delete('/keys/:id', rejectQuery, requireScope('admin'), async (ctx) => {
    const { id } = parse(idParams, ctx.params)
    if (!uuidParam.safeParse(id).success) throw new NotFoundError('API key')
    ok(ctx, { ...apiKeyView(await deps.accounts.deleteApiKey(principalOf(ctx).accountId, id)), deleted: true })
  })
  return router
}

import { Router } from '@koa/router'
import type { Context } from 'koa'
import type { AppDeps } from '../appDeps.ts'
import { ok } from '../respond.ts'
import { decodeCursor, encodeCursor, noBody, pagingQuery, parse, rejectQuery, uuidParam } from '../validate.ts'
import { principalOf, requireScope } from '../middleware/auth.ts'
import { NotFoundError } from '../../domain/errors.ts'
import { idempotentCreation } from '../middleware/idempotency.ts'
import { registryQuery } from '../../domain/skills/skill.schema.ts'

const registryQueryWithPaging = pagingQuery.extend(registryQuery.shape)

/** The custom skill id from the path; a value that is not a uuid cannot name one (404). */
function skillId(ctx: Context): string {
  const id = (ctx.params as Record<string, string | undefined>).id
  if (!uuidParam.safeParse(id).success) throw new NotFoundError('Custom skill')
  return id as string
}

/** `GET /skills/registry`: every account's public custom skills (no credentials needed). */
export function skillRegistryRoutes({ core }: AppDeps): Router {
  const router = new Router()
  router.get('/skills/registry', async (ctx) => {
    const q = parse(registryQueryWithPaging, ctx.query)
    const { skills, last } = await core.listSkillRegistry({ q: q.q, tag: q.tag, limit: q.limit, after: decodeCursor(q.cursor) })
    ok(ctx, { skills, nextCursor: last ? encodeCursor(last.createdAt, last.id) : null })
  })
  return router
}

/**
 * An account's custom skills (camelCase bodies and answers): list, create, read, change, delete.
 * Another account's skill is 404 here, public or not; the registry lists the public ones.
 */
export function customSkillRoutes({ core }: AppDeps): Router {
  const router = new Router({ prefix: '/skills/custom' })
  const account = (ctx: Context) => principalOf(ctx).accountId
  const schemas = core.customSkillSchemas

  router.get('/', requireScope('read'), async (ctx) => {
    const q = parse(pagingQuery, ctx.query)
    const { skills, last } = await core.listCustomSkills({ accountId: account(ctx), limit: q.limit, after: decodeCursor(q.cursor) })
    ok(ctx, { skills, nextCursor: last ? encodeCursor(last.createdAt, last.id) : null })
  })
  router.post('/', rejectQuery, requireScope('trade'), idempotentCreation(core.idempotencyKeys), async (ctx) => {
    const skill = parse(schemas.create, ctx.request.body)
    ok(ctx, await core.createCustomSkill({ accountId: account(ctx), skill }), 201)
  })
  router.get('/:id', rejectQuery, requireScope('read'), async (ctx) => {
    ok(ctx, await core.getCustomSkill({ accountId: account(ctx), id: skillId(ctx) }))
  })
  router.patch('/:id', rejectQuery, requireScope('trade'), async (ctx) => {
    const id = skillId(ctx)
    const patch = parse(schemas.update, ctx.request.body ?? {})
    ok(ctx, await core.updateCustomSkill({ accountId: account(ctx), id, patch }))
  })
  router.delete('/:id', rejectQuery, requireScope('trade'), async (ctx) => {
    const id = skillId(ctx)
    parse(noBody, ctx.request.body)
    ok(ctx, await core.deleteCustomSkill({ accountId: account(ctx), id }))
  })
  return router
}

import { text } from '../../domain/util/text.ts'
import { Router } from '@koa/router'
import type { Context } from 'koa'
import { randomUUID } from 'node:crypto'
import { z } from 'zod'
import type { AppDeps } from '../appDeps.ts'
import { ok } from '../respond.ts'
import { evmAddress, limitQuery, parse, uuidParam, rejectQuery } from '../validate.ts'
import { principalOf, requireScope } from '../middleware/auth.ts'
import { idempotency, type IdempotencyState } from '../middleware/idempotency.ts'
import { portfolio, transactions, transfer } from '../../chain/walletService.ts'
import { ChainNotConfiguredError, NotFoundError, ValidationError } from '../../domain/errors.ts'

export const transferBody = z.strictObject({
  agentId: z.uuid('Must be an agent id.'),
  to: evmAddress,
  token: text({ min: 1, max: 64 }),
  amount: z.string().regex(/^\d{1,30}(\.\d{1,36})?$/, 'A decimal amount such as "1.5".'),
})
export const portfolioQuery = z.strictObject({ agentId: z.uuid('Must be an agent id.') })
export const txQuery = z.strictObject({
  limit: limitQuery,
  cursor: z.string().max(300).optional(),
})

/** Holdings, whitelisted transfers and the wallet's transaction outbox. */
export function walletRoutes(deps: AppDeps): Router {
  const router = new Router()
  const wallet = () => {
    if (!deps.wallet) throw new ChainNotConfiguredError()
    return deps.wallet
  }

  router.get('/wallet/portfolio', requireScope('read'), async (ctx) => {
    const { agentId } = parse(portfolioQuery, ctx.query)
    ok(ctx, await portfolio({ pool: deps.pool, wallet: wallet(), agents: deps.agentsRepository }, principalOf(ctx).accountId, agentId))
  })

  router.post(
    '/wallet/transfer',
    requireScope('trade'),
    rejectQuery,
    idempotency({ pool: deps.pool, route: 'wallet/transfer', required: false }),
    async (ctx: Context) => {
      const body = parse(transferBody, ctx.request.body)
      const opId = (ctx.state.idempotency as IdempotencyState | undefined)?.resourceId ?? randomUUID()
      ok(ctx, await transfer({ pool: deps.pool, wallet: wallet(), agents: deps.agentsRepository }, principalOf(ctx).accountId, body, opId))
    },
  )

  router.get('/agents/:id/transactions', requireScope('read'), async (ctx) => {
    const id = (ctx.params as { id?: string }).id
    if (!uuidParam.safeParse(id).success) throw new NotFoundError('Agent')
    const q = parse(txQuery, ctx.query)
    let before: string | undefined
    if (q.cursor) {
      before = Buffer.from(q.cursor, 'base64url').toString()
      if (!/^[A-Za-z0-9:_-]{1,200}$/.test(before)) throw new ValidationError({ cursor: 'Invalid cursor.' })
    }
    ok(ctx, await transactions({ pool: deps.pool, agents: deps.agentsRepository }, principalOf(ctx).accountId, id!, { limit: q.limit, before }))
  })
  return router
}

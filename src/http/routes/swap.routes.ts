import { Router } from '@koa/router'
import type { Context } from 'koa'
import { randomUUID } from 'node:crypto'
import type { AppDeps } from '../appDeps.ts'
import { ok } from '../respond.ts'
import { uuidParam, rejectQuery } from '../validate.ts'
import { principalOf, requireScope } from '../middleware/auth.ts'
import { idempotency, type IdempotencyState } from '../middleware/idempotency.ts'
import { createSwapsService } from '../../domain/swaps/swap.service.ts'
import { NotFoundError } from '../../domain/errors.ts'

/**
 * Swaps from agent wallets: `POST /swap/quote` (nothing sent), `POST /swap/execute` (a durable
 * wallet operation; `Idempotency-Key` honoured when sent; 200 when it ended, 202 while it is still
 * pending) and `GET /swap/:id` to poll one.
 */
export function swapRoutes(deps: AppDeps): Router {
  const router = new Router({ prefix: '/swap' })
  if (!deps.wallet) return router
  const swaps = createSwapsService({ pool: deps.pool, wallet: deps.wallet, runtime: deps.runtime })

  router.post('/quote', rejectQuery, requireScope('trade'), async (ctx) => {
    ok(ctx, await swaps.quote(principalOf(ctx).accountId, ctx.request.body))
  })
  router.post(
    '/execute',
    requireScope('trade'),
    rejectQuery,
    idempotency({ pool: deps.pool, route: 'swap/execute', required: false }),
    async (ctx: Context) => {
      const opId = (ctx.state.idempotency as IdempotencyState | undefined)?.resourceId ?? randomUUID()
      const result = await swaps.execute(principalOf(ctx).accountId, ctx.request.body, opId)
      ok(ctx, result, result.status === 'confirmed' || result.status === 'failed' ? 200 : 202)
    },
  )
  router.get('/:id', rejectQuery, requireScope('read'), async (ctx) => {
    const id = (ctx.params as { id?: string }).id
    if (!uuidParam.safeParse(id).success) throw new NotFoundError('Swap')
    ok(ctx, await swaps.get(principalOf(ctx).accountId, id!))
  })
  return router
}

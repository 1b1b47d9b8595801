import { Router } from '@koa/router'
import type { Context } from 'koa'
import { randomUUID } from 'node:crypto'
import type { AppDeps } from '../appDeps.ts'
import { ok } from '../respond.ts'
import { uuidParam, rejectQuery } from '../validate.ts'
import { principalOf, requireScope } from '../middleware/auth.ts'
import { idempotency, type IdempotencyState } from '../middleware/idempotency.ts'
import { readSwapRequest } from '../../domain/swaps/swap.schema.ts'
import { NotFoundError } from '../../domain/errors.ts'
import { streamActorEvents } from '../actorEvents.ts'

/**
 * Swaps from agent wallets: `POST /swap/quote` (nothing sent), `POST /swap/execute` (a durable
 * wallet operation; `Idempotency-Key` honoured when sent; 200 when it ended, 202 while it is still
 * pending) and `GET /swap/:id` to poll one. Each parses, calls one use case of `core`, answers.
 */
export function swapRoutes({ core }: AppDeps): Router {
  const router = new Router({ prefix: '/swap' })
  if (!core.chainConfigured) return router

  router.post('/quote', rejectQuery, requireScope('trade'), async (ctx) => {
    ok(ctx, await core.quoteSwap(readSwapRequest(principalOf(ctx).accountId, ctx.request.body)))
  })
  router.post(
    '/execute',
    requireScope('trade'),
    rejectQuery,
    idempotency({ keys: core.idempotencyKeys, route: 'swap/execute', required: false }),
    async (ctx: Context) => {
      const operationId = (ctx.state.idempotency as IdempotencyState | undefined)?.resourceId ?? randomUUID()
      const swap = await core.executeSwap({ ...readSwapRequest(principalOf(ctx).accountId, ctx.request.body), operationId })
      ok(ctx, swap, swap.status === 'confirmed' || swap.status === 'failed' ? 200 : 202)
    },
  )
  router.get('/:id', rejectQuery, requireScope('read'), async (ctx) => {
    const id = (ctx.params as { id?: string }).id
    if (!uuidParam.safeParse(id).success) throw new NotFoundError('Swap')
    ok(ctx, await core.getSwap({ accountId: principalOf(ctx).accountId, swapId: id! }))
  })
  // Server-Sent Events: each status as it commits, until `confirmed` or `failed` (resumable with Last-Event-ID).
  router.get('/:id/events', rejectQuery, requireScope('read'), async (ctx) => {
    const id = (ctx.params as { id?: string }).id
    if (!uuidParam.safeParse(id).success) throw new NotFoundError('Swap')
    const read = () => core.getSwap({ accountId: principalOf(ctx).accountId, swapId: id! })
    await streamActorEvents(ctx, core.actorEvents, { actorId: id!, kind: 'walletop', read, isFinal: (s) => s === 'confirmed' || s === 'failed' })
  })
  return router
}

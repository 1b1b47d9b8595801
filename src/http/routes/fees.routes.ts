import { randomUUID } from 'node:crypto'
import { Router } from '@koa/router'
import type { Context } from 'koa'
import type { AppDeps } from '../appDeps.ts'
import { ok } from '../respond.ts'
import { parse, rejectQuery } from '../validate.ts'
import { principalOf, requireScope } from '../middleware/auth.ts'
import { idempotency, type IdempotencyState } from '../middleware/idempotency.ts'
import { claimBody, earningsQuery } from '../../domain/fees/fees.schema.ts'

export { claimBody, earningsQuery } from '../../domain/fees/fees.schema.ts'

/**
 * Creator fees: what an agent's tokens earned (read on chain), claims to its payout wallet
 * (a `claim` wallet operation; `Idempotency-Key` honoured; 200 when it ended, 202 while it is
 * pending), and platform fee totals. Each parses, calls one use case of `core`, answers.
 */
export function feeRoutes({ core }: AppDeps): Router {
  const router = new Router({ prefix: '/fees' })

  router.get('/earnings', requireScope('read'), async (ctx) => {
    const { agentId } = parse(earningsQuery, ctx.query)
    ok(ctx, await core.getFeeEarnings({ accountId: principalOf(ctx).accountId, agentId }))
  })
  router.post(
    '/claim',
    requireScope('trade'),
    rejectQuery,
    idempotency({ keys: core.idempotencyKeys, route: 'fees/claim', required: false }),
    async (ctx: Context) => {
      const body = parse(claimBody, ctx.request.body ?? {})
      const operationId = (ctx.state.idempotency as IdempotencyState | undefined)?.resourceId ?? randomUUID()
      const claim = await core.claimFees({ ...body, accountId: principalOf(ctx).accountId, operationId })
      ok(ctx, claim, claim.status === 'confirmed' ? 200 : 202)
    },
  )
  router.get('/stats', requireScope('read'), rejectQuery, async (ctx) => {
    ok(ctx, await core.getFeeStats())
  })
  return router
}

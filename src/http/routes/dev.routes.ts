import { Router } from '@koa/router'
import { z } from 'zod'
import type { AppDeps } from '../appDeps.ts'
import { ok } from '../respond.ts'
import { parse, rejectQuery } from '../validate.ts'
import { principalOf, requireScope } from '../middleware/auth.ts'
import { NotFoundError } from '../../domain/errors.ts'

const amount = (max: number) =>
  z
    .string()
    .regex(/^\d{1,9}(\.\d{1,6})?$/, 'A decimal amount such as "10".')
    .refine((v) => Number(v) <= max, `At most ${max} per request.`)

/** An agent wallet (`agentId`) or the caller's account deposit address (`accountDeposit: true`), not both. */
export const faucetBody = z
  .strictObject({ agentId: z.uuid().optional(), accountDeposit: z.literal(true).optional(), eth: amount(100).optional(), usdc: amount(1_000_000).optional() })
  .superRefine((b, ctx) => {
    if (!b.agentId === !b.accountDeposit) ctx.addIssue({ code: 'custom', path: ['agentId'], message: 'Send agentId, or accountDeposit: true (not both).' })
  })

/** Dev faucet, only on the embedded chain (404 anywhere else). */
export function devRoutes(deps: AppDeps): Router {
  const router = new Router({ prefix: '/dev' })
  router.post('/faucet', rejectQuery, requireScope('trade'), async (ctx) => {
    if (!deps.core.faucetAvailable) throw new NotFoundError('Route')
    const body = parse(faucetBody, ctx.request.body)
    ok(ctx, await deps.core.fundFromFaucet(principalOf(ctx).accountId, body))
  })
  return router
}

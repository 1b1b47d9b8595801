import { Router } from '@koa/router'
import type { AppDeps } from '../appDeps.ts'
import { ok } from '../respond.ts'
import { parse, rejectQuery } from '../validate.ts'
import { principalOf, requireScope } from '../middleware/auth.ts'
import { auditActorOf } from '../../domain/agents/auditTrail.ts'
import { ownerPolicySchema } from '../../domain/policies/ownerPolicy.schema.ts'

/**
 * The account's policy over every money move of its agents (docs/api.md, "Policies"):
 * `GET /policies/account` and `PUT /policies/account` (`admin`, body `{ rules }`: a tightening
 * applies at once, a loosening waits for the hold). An agent's own policy is under
 * `/agents/:id/policy` (agents.routes.ts).
 */
export function policyRoutes({ core }: AppDeps): Router {
  const router = new Router({ prefix: '/policies' })
  router.get('/account', rejectQuery, requireScope('admin'), async (ctx) => {
    ok(ctx, await core.getOwnerPolicy({ scope: 'account', accountId: principalOf(ctx).accountId }))
  })
  router.put('/account', rejectQuery, requireScope('admin'), async (ctx) => {
    const policy = parse(ownerPolicySchema, ctx.request.body)
    const p = principalOf(ctx)
    ok(ctx, await core.putOwnerPolicy({ target: { scope: 'account', accountId: p.accountId }, actor: auditActorOf(p), policy }))
  })
  return router
}

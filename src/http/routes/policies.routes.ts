import { Router } from '@koa/router'
import type { AppDeps } from '../appDeps.ts'
import { ok } from '../respond.ts'
import { parse, rejectQuery } from '../validate.ts'
import { principalOf, requireScope } from '../middleware/auth.ts'
import { auditActorOf } from '../../domain/agents/auditTrail.ts'
import { ownerPolicySchema } from '../../domain/policies/ownerPolicy.schema.ts'
import { simulatePolicyBody } from '../../domain/policies/simulatePolicy.ts'

/**
 * The account's policy over every money move of its agents (docs/api.md, "Policies"):
 * `GET /policies/account` and `PUT /policies/account` (`admin`, body `{ rules }`: a tightening
 * applies at once, a loosening waits for the hold). An agent's own policy is under
 * `/agents/:id/policy` (agents.routes.ts). `POST /policies/simulate` (`admin`: its answer shows
 * the rules): a dry run of both policies on an operation, nothing reserved or sent.
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
  router.post('/simulate', rejectQuery, requireScope('admin'), async (ctx) => {
    const body = parse(simulatePolicyBody, ctx.request.body)
    ok(ctx, await core.simulatePolicy({ accountId: principalOf(ctx).accountId, body }))
  })
  return router
}

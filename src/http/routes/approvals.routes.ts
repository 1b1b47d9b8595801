import { Router } from '@koa/router'
import type { Context } from 'koa'
import type { AppDeps } from '../appDeps.ts'
import { ok } from '../respond.ts'
import { parse, rejectQuery } from '../validate.ts'
import { principalOf, requireScope } from '../middleware/auth.ts'
import { NotFoundError } from '../../domain/errors.ts'
import { decideApprovalBody, listApprovalsQuery } from '../../domain/approvals/approval.schema.ts'
import type { Principal } from '../../domain/accounts/scopes.ts'

const approvalId = (ctx: Context): string => {
  const id = (ctx.params as Record<string, string | undefined>).id
  if (!id || id.length > 200) throw new NotFoundError('Approval')
  return id
}

/** Who decided, as the approval records it: the API key's id, or the signed-in session's address. */
const decider = (p: Principal) => (p.keyId ? `key:${p.keyId}` : `session:${p.address ?? p.accountId}`)

/**
 * Human approval of money moves above the agent policy's `require_approval_above_usd`:
 * `GET /approvals?status=&agentId=&limit=&cursor=` (paged: `nextCursor`) and `GET /approvals/:id` (`read`), `POST
 * /approvals/:id/approve` and `/reject` (`admin`, `{ reason? }`; who decided and when are kept).
 */
export function approvalRoutes({ core }: AppDeps): Router {
  const router = new Router()
  router.get('/approvals', requireScope('read'), async (ctx) => {
    ok(ctx, await core.listApprovals({ accountId: principalOf(ctx).accountId, query: parse(listApprovalsQuery, ctx.query) }))
  })
  router.get('/approvals/:id', rejectQuery, requireScope('read'), async (ctx) => {
    ok(ctx, await core.getApproval({ accountId: principalOf(ctx).accountId, approvalId: approvalId(ctx) }))
  })
  for (const decision of ['approve', 'reject'] as const) {
    router.post(`/approvals/:id/${decision}`, rejectQuery, requireScope('admin'), async (ctx) => {
      const id = approvalId(ctx)
      const body = parse(decideApprovalBody, ctx.request.body ?? {})
      const p = principalOf(ctx)
      ok(ctx, await core.decideApproval({ accountId: p.accountId, approvalId: id, decision, decidedBy: decider(p), body }))
    })
  }
  return router
}

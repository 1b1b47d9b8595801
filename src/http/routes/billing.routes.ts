import { Router } from '@koa/router'
import type { AppDeps } from '../appDeps.ts'
import { ok } from '../respond.ts'
import { decodeCursor, encodeCursor, pagingQuery, parse, rejectQuery } from '../validate.ts'
import { principalOf, requireScope } from '../middleware/auth.ts'
import { creditKindSchema } from '../../domain/billing/creditKinds.ts'

export const billingTransactionsQuery = pagingQuery.extend({ kind: creditKindSchema.optional() })

/** The caller's credits and their ledger (read scope). */
export function billingRoutes(deps: AppDeps): Router {
  const router = new Router()
  router.get('/billing', rejectQuery, requireScope('read'), async (ctx) => {
    ok(ctx, await deps.core.getBilling({ accountId: principalOf(ctx).accountId }))
  })
  router.get('/billing/transactions', requireScope('read'), async (ctx) => {
    const q = parse(billingTransactionsQuery, ctx.query)
    const { transactions, last } = await deps.core.listCreditTransactions({ accountId: principalOf(ctx).accountId, limit: q.limit, kind: q.kind, after: decodeCursor(q.cursor) })
    ok(ctx, { transactions, nextCursor: last ? encodeCursor(last.createdAt, last.id) : null })
  })
  router.get('/billing/deposit', rejectQuery, requireScope('read'), async (ctx) => {
    ok(ctx, await deps.core.getDepositInfo({ accountId: principalOf(ctx).accountId }))
  })
  return router
}

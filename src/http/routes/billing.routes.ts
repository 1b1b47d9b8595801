import { Router } from '@koa/router'
import type { AppDeps } from '../appDeps.ts'
import { ok } from '../respond.ts'
import { decodeCursor, encodeCursor, pagingQuery, parse, rejectQuery } from '../validate.ts'
import { principalOf, requireScope } from '../middleware/auth.ts'
import { creditKindSchema } from '../../domain/billing/creditKinds.ts'
import { getBilling } from '../../domain/billing/getBilling.ts'
import { listCreditTransactions } from '../../domain/billing/listCreditTransactions.ts'
import { NotFoundError } from '../../domain/errors.ts'

export const billingTransactionsQuery = pagingQuery.extend({ kind: creditKindSchema.optional() })

/** The caller's credits and their ledger (read scope). */
export function billingRoutes(deps: AppDeps): Router {
  const router = new Router()
  router.get('/billing', rejectQuery, requireScope('read'), async (ctx) => {
    ok(ctx, await getBilling({ credits: deps.credits }, { accountId: principalOf(ctx).accountId }))
  })
  router.get('/billing/transactions', requireScope('read'), async (ctx) => {
    const q = parse(billingTransactionsQuery, ctx.query)
    const { transactions, last } = await listCreditTransactions(
      { credits: deps.credits },
      { accountId: principalOf(ctx).accountId, limit: q.limit, kind: q.kind, after: decodeCursor(q.cursor) },
    )
    ok(ctx, { transactions, nextCursor: last ? encodeCursor(last.createdAt, last.id) : null })
  })
  router.get('/billing/deposit', rejectQuery, requireScope('read'), async (ctx) => {
    if (!deps.deposits) throw new NotFoundError('Route')
    ok(ctx, await deps.deposits.info(principalOf(ctx).accountId))
  })
  return router
}

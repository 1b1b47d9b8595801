import { Router } from '@koa/router'
import type { Context } from 'koa'
import { randomUUID } from 'node:crypto'
import { z } from 'zod'
import type { AppDeps } from '../appDeps.ts'
import { ok } from '../respond.ts'
import { limitQuery, parse, uuidParam, rejectQuery } from '../validate.ts'
import { principalOf, requireScope } from '../middleware/auth.ts'
import { idempotency, type IdempotencyState } from '../middleware/idempotency.ts'
import { performanceQuery, portfolioInput, transferInput, walletPortfolioQuery } from '../../domain/wallet/wallet.schema.ts'
import { NotFoundError } from '../../domain/errors.ts'
import { paperDepositBody } from '../../domain/paper/paper.schema.ts'

export const txQuery = z.strictObject({
  limit: limitQuery,
  cursor: z.string().max(300).optional(),
})

/**
 * Holdings (`GET /wallet/portfolio`), whitelisted transfers (`POST /wallet/transfer`, a durable
 * wallet operation; `Idempotency-Key` honoured when sent) and the wallet's transaction outbox.
 * Each parses, calls one use case of `core`, answers.
 */
export function walletRoutes({ core }: AppDeps): Router {
  const router = new Router()

  router.get('/wallet/portfolio', requireScope('read'), async (ctx) => {
    const { agentId } = parse(portfolioInput, ctx.query)
    ok(ctx, await core.getPortfolio({ accountId: principalOf(ctx).accountId, agentId }))
  })

  // The reference client's getPortfolio: GET /portfolio?wallet=<one of the account's agent wallets>.
  router.get('/portfolio', requireScope('read'), async (ctx) => {
    const { wallet } = parse(walletPortfolioQuery, ctx.query)
    ok(ctx, await core.getWalletPortfolio({ accountId: principalOf(ctx).accountId, wallet }))
  })

  router.post(
    '/wallet/transfer',
    requireScope('trade'),
    rejectQuery,
    idempotency({ keys: core.idempotencyKeys, route: 'wallet/transfer', required: false }),
    async (ctx: Context) => {
      const body = parse(transferInput, ctx.request.body)
      const operationId = (ctx.state.idempotency as IdempotencyState | undefined)?.resourceId ?? randomUUID()
      const transfer = await core.transferFunds({ ...body, accountId: principalOf(ctx).accountId, operationId })
      // 202 while it waits for an owner's approval; otherwise answered as before (it ended or the wait ran out).
      ok(ctx, transfer, transfer.status === 'awaiting_approval' ? 202 : 200)
    },
  )

  // A virtual deposit into a paper agent's ledger; with an Idempotency-Key, a retry answers the same deposit.
  router.post(
    '/agents/:id/paper/deposit',
    requireScope('trade'),
    rejectQuery,
    idempotency({ keys: core.idempotencyKeys, route: 'agents/paper/deposit', required: false }),
    async (ctx: Context) => {
      const id = (ctx.params as { id?: string }).id
      if (!uuidParam.safeParse(id).success) throw new NotFoundError('Agent')
      const body = parse(paperDepositBody, ctx.request.body)
      const depositId = (ctx.state.idempotency as IdempotencyState | undefined)?.resourceId ?? randomUUID()
      ok(ctx, await core.depositPaper({ ...body, accountId: principalOf(ctx).accountId, agentId: id!, id: depositId }), 201)
    },
  )

  router.get('/agents/:id/performance', requireScope('read'), async (ctx) => {
    const id = (ctx.params as { id?: string }).id
    if (!uuidParam.safeParse(id).success) throw new NotFoundError('Agent')
    ok(ctx, await core.getAgentPerformance({ ...parse(performanceQuery, ctx.query), accountId: principalOf(ctx).accountId, agentId: id! }))
  })

  router.get('/agents/:id/transactions', requireScope('read'), async (ctx) => {
    const id = (ctx.params as { id?: string }).id
    if (!uuidParam.safeParse(id).success) throw new NotFoundError('Agent')
    const q = parse(txQuery, ctx.query)
    ok(ctx, await core.listTransactions({ accountId: principalOf(ctx).accountId, agentId: id!, limit: q.limit, cursor: q.cursor }))
  })
  return router
}

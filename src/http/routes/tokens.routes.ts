import { Router } from '@koa/router'
import type { AppDeps } from '../appDeps.ts'
import { ok } from '../respond.ts'
import { parse, rejectQuery } from '../validate.ts'
import { boardQuery, quotesQuery, tradesQuery } from '../../domain/tokens/tokens.schema.ts'

export { boardQuery, quotesQuery, tradesQuery } from '../../domain/tokens/tokens.schema.ts'

/**
 * Public token data: the quote assets of each venue, the board (prices, market caps, 24 h volume
 * and change), one token with its curve or pool state and creator fees, and its trades. Each
 * parses, calls one use case of `core`, answers.
 */
export function tokenRoutes({ core }: AppDeps): Router {
  const router = new Router()
  const address = (ctx: { params: unknown }) => (ctx.params as { address?: string }).address

  router.get('/quotes', async (ctx) => {
    ok(ctx, await core.listQuoteAssets(parse(quotesQuery, ctx.query)))
  })
  router.get('/tokens', async (ctx) => {
    ok(ctx, await core.listTokens(parse(boardQuery, ctx.query)))
  })
  router.get('/tokens/:address', rejectQuery, async (ctx) => {
    ok(ctx, await core.getToken({ address: address(ctx) }))
  })
  router.get('/tokens/:address/trades', async (ctx) => {
    ok(ctx, await core.listTrades({ ...parse(tradesQuery, ctx.query), address: address(ctx) }))
  })
  return router
}

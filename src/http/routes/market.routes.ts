import { Router } from '@koa/router'
import type { AppDeps } from '../appDeps.ts'
import { ok } from '../respond.ts'
import { parse, rejectQuery } from '../validate.ts'
import { priceQuery, readPriceRequest } from '../../domain/tokens/tokens.schema.ts'
import { decodeOffset, encodeOffset, leaderboardQuery } from '../../domain/market/market.schema.ts'

export { priceQuery } from '../../domain/tokens/tokens.schema.ts'
export { leaderboardQuery } from '../../domain/market/market.schema.ts'

/**
 * Public market data (no credentials): USD prices from the pools and the venue-a curve, the
 * tokenized stocks, platform counters and the creator fee leaderboard.
 */
export function marketRoutes({ core }: AppDeps): Router {
  const router = new Router()

  // GET /price?tokens=ETH,USDC,0x…  or  GET /price?mint=<one token>&currency=usd
  router.get('/price', async (ctx) => {
    const request = readPriceRequest(parse(priceQuery, ctx.query))
    const res = await core.getPrice(request)
    // The one-token form also answers with that token's fields at the top level.
    ok(ctx, request.field === 'mint' && res.prices.length === 1 ? { ...res.prices[0]!, ...res } : res)
  })
  router.get('/stock-tokens', rejectQuery, async (ctx) => {
    ok(ctx, await core.listStockTokens())
  })
  router.get('/stats', rejectQuery, async (ctx) => {
    ok(ctx, await core.getStats())
  })
  router.get('/leaderboard', async (ctx) => {
    const q = parse(leaderboardQuery, ctx.query)
    const at = { limit: q.limit, offset: decodeOffset(q.cursor) }
    const { nextOffset, ...page } = q.sort_by === 'pnl' ? await core.getPnlLeaderboard({ ...at, mode: q.mode }) : await core.getLeaderboard(at)
    ok(ctx, { ...page, nextCursor: nextOffset === null ? null : encodeOffset(nextOffset) })
  })
  return router
}

import { Router } from '@koa/router'
import { z } from 'zod'
import type { AppDeps } from '../appDeps.ts'
import { ok } from '../respond.ts'
import { limitQuery, parse, rejectQuery } from '../validate.ts'
import { ValidationError } from '../../domain/errors.ts'
import { createMarketData } from '../../domain/fees/marketData.ts'

const list = z.union([z.string().max(5000), z.array(z.string().max(5000)).max(100)])
/** Lenient on unknown parameters: external price clients send their own extras. Prices are in USD only. */
export const priceQuery = z.object({
  tokens: list.optional(),
  mint: list.optional(),
  currency: z.string().max(100).refine((c) => c.toLowerCase() === 'usd', 'Only usd is supported.').optional(),
})
export const leaderboardQuery = z.strictObject({
  limit: limitQuery,
  cursor: z.string().max(200).optional(),
})

/** Comma-separated (or repeated) values, trimmed, empty ones dropped, duplicates (any case) removed. */
function splitList(value: string | string[] | undefined): string[] {
  const seen = new Set<string>()
  const out: string[] = []
  for (const part of [value ?? []].flat().flatMap((v) => v.split(','))) {
    const t = part.trim()
    if (!t || seen.has(t.toLowerCase())) continue
    seen.add(t.toLowerCase())
    out.push(t)
  }
  return out
}

const encodeOffset = (offset: number) => Buffer.from(JSON.stringify([offset])).toString('base64url')
function decodeOffset(cursor: string | undefined): number {
  if (cursor === undefined) return 0
  try {
    return z.tuple([z.number().int().min(0).max(1_000_000)]).parse(JSON.parse(Buffer.from(cursor, 'base64url').toString()))[0]
  } catch {
    throw new ValidationError({ cursor: 'Invalid cursor.' })
  }
}

/**
 * Public market data (no credentials): USD prices from the pools and the venue-a curve, the
 * tokenized stocks, platform counters and the creator fee leaderboard.
 */
export function marketRoutes(deps: AppDeps): Router {
  const router = new Router()
  const market = createMarketData({ pool: deps.pool, chain: deps.chain })

  // GET /price?tokens=ETH,USDC,0x…  or  GET /price?mint=<one token>&currency=usd
  router.get('/price', async (ctx) => {
    const q = parse(priceQuery, ctx.query)
    const field = q.tokens === undefined && q.mint !== undefined ? 'mint' : 'tokens'
    const wanted = splitList([q.tokens ?? [], q.mint ?? []].flat())
    const res = await market.prices(wanted, field)
    // The one-token form also answers with that token's fields at the top level.
    ok(ctx, field === 'mint' && res.prices.length === 1 ? { ...res.prices[0]!, ...res } : res)
  })

  router.get('/stock-tokens', rejectQuery, async (ctx) => {
    ok(ctx, await market.stockTokens())
  })

  router.get('/stats', rejectQuery, async (ctx) => {
    ok(ctx, await market.stats())
  })

  router.get('/leaderboard', async (ctx) => {
    const q = parse(leaderboardQuery, ctx.query)
    const { nextOffset, ...page } = await market.leaderboard({ limit: q.limit, offset: decodeOffset(q.cursor) })
    ok(ctx, { ...page, nextCursor: nextOffset === null ? null : encodeOffset(nextOffset) })
  })
  return router
}

import { Router } from '@koa/router'
import type { Context } from 'koa'
import { z } from 'zod'
import type { AppDeps } from '../appDeps.ts'
import { ok } from '../respond.ts'
import { parse, rejectQuery, uuidParam } from '../validate.ts'
import { principalOf, requireScope } from '../middleware/auth.ts'
import { idempotency, idempotentCreation } from '../middleware/idempotency.ts'
import { NotFoundError } from '../../domain/errors.ts'
import { browseListingsQuery, createListingBody, ownPageQuery, placeBidBody } from '../../domain/marketplace/marketplace.schema.ts'

const noBody = z.union([z.undefined(), z.strictObject({})])

/** A uuid from the path; anything else cannot name a listing or bid (404). */
function idOf(ctx: Context, name: 'id' | 'bidId', what: string): string {
  const id = (ctx.params as Record<string, string | undefined>)[name]
  if (!uuidParam.safeParse(id).success) throw new NotFoundError(what)
  return id as string
}

/**
 * `GET /market` and `GET /market/:id`: active listings and one listing, for anyone (no
 * credentials). A path that is not a listing id (`/market/history`) is left to the account's routes.
 */
export function marketplacePublicRoutes({ core }: AppDeps): Router {
  const router = new Router()
  router.get('/market', async (ctx) => {
    ok(ctx, await core.browseListings(parse(browseListingsQuery, ctx.query)))
  })
  router.get('/market/:id', async (ctx, next) => {
    const id = (ctx.params as { id?: string }).id
    if (!uuidParam.safeParse(id).success) return next()
    parse(z.strictObject({}), ctx.query)
    ok(ctx, await core.getListing({ listingId: id! }))
  })
  return router
}

/**
 * The account's side of the market (DESIGN §12): sell, cancel, buy (`Idempotency-Key` honoured),
 * its history, and bids (place, list, accept, reject, withdraw). Another account's listing or bid
 * is 404 wherever only its owner may act.
 */
export function marketplaceRoutes({ core }: AppDeps): Router {
  const router = new Router({ prefix: '/market' })
  const account = (ctx: Context) => principalOf(ctx).accountId

  router.post('/', rejectQuery, requireScope('trade'), idempotentCreation(core.idempotencyKeys), async (ctx) => {
    ok(ctx, await core.createListing({ ...parse(createListingBody, ctx.request.body), accountId: account(ctx) }), 201)
  })
  router.get('/history', requireScope('read'), async (ctx) => {
    const q = parse(ownPageQuery, ctx.query)
    ok(ctx, await core.getMarketHistory({ accountId: account(ctx), limit: q.limit, cursor: q.cursor }))
  })
  router.get('/bids', requireScope('read'), async (ctx) => {
    const q = parse(ownPageQuery, ctx.query)
    ok(ctx, await core.listMyBids({ accountId: account(ctx), limit: q.limit, cursor: q.cursor }))
  })
  router.get('/bids/received', requireScope('read'), async (ctx) => {
    const q = parse(ownPageQuery, ctx.query)
    ok(ctx, await core.listReceivedBids({ accountId: account(ctx), limit: q.limit, cursor: q.cursor }))
  })
  router.delete('/:id', rejectQuery, requireScope('trade'), async (ctx) => {
    const listingId = idOf(ctx, 'id', 'Listing')
    parse(noBody, ctx.request.body)
    ok(ctx, await core.cancelListing({ accountId: account(ctx), listingId }))
  })
  router.post('/:id/buy', rejectQuery, requireScope('trade'), idempotency({ keys: core.idempotencyKeys, route: 'market/buy', required: false }), async (ctx) => {
    const listingId = idOf(ctx, 'id', 'Listing')
    parse(noBody, ctx.request.body)
    ok(ctx, await core.buyListing({ accountId: account(ctx), listingId }))
  })
  router.post('/:id/bids', rejectQuery, requireScope('trade'), idempotentCreation(core.idempotencyKeys), async (ctx) => {
    const listingId = idOf(ctx, 'id', 'Listing')
    ok(ctx, await core.placeBid({ accountId: account(ctx), listingId, credits: parse(placeBidBody, ctx.request.body).credits }), 201)
  })
  router.post('/bids/:bidId/accept', rejectQuery, requireScope('trade'), idempotency({ keys: core.idempotencyKeys, route: 'market/bids/accept', required: false }), async (ctx) => {
    const bidId = idOf(ctx, 'bidId', 'Bid')
    parse(noBody, ctx.request.body)
    ok(ctx, await core.acceptBid({ accountId: account(ctx), bidId }))
  })
  router.post('/bids/:bidId/reject', rejectQuery, requireScope('trade'), async (ctx) => {
    const bidId = idOf(ctx, 'bidId', 'Bid')
    parse(noBody, ctx.request.body)
    ok(ctx, await core.endBid({ accountId: account(ctx), bidId, as: 'rejected' }))
  })
  router.delete('/bids/:bidId', rejectQuery, requireScope('trade'), async (ctx) => {
    const bidId = idOf(ctx, 'bidId', 'Bid')
    parse(noBody, ctx.request.body)
    ok(ctx, await core.endBid({ accountId: account(ctx), bidId, as: 'withdrawn' }))
  })
  return router
}

import type { Context } from 'koa'

/**
 * Sends a success: the resource's fields at the top level plus `meta`.
 *
 * @example
 * ok(ctx, { agents, nextCursor })
 * ok(ctx, agent, 201)
 */
export function ok(ctx: Context, body: object, status = 200): void {
  ctx.status = status
  // Set as a header, koa skips its MIME lookup for an object body (a measurable share of a small response).
  ctx.set('Content-Type', 'application/json; charset=utf-8')
  ctx.body = { ...body, meta: { requestId: ctx.state.requestId as string, timestamp: new Date().toISOString() } }
}

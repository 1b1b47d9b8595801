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
  ctx.body = { ...body, meta: { requestId: ctx.state.requestId as string, timestamp: new Date().toISOString() } }
}

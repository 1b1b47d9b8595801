import type { Middleware } from 'koa'
import type { CursorSeal } from '../../domain/util/cursorSeal.ts'

/**
 * Page cursors are signed at the API's edge, on every paged route at once: `?cursor=` must carry
 * the service's signature (else a 422 naming `cursor`) and reaches the route without it; a
 * `nextCursor` the route answers is signed on its way out. Routes and use cases keep their own
 * cursor formats, none of which can then be forged.
 *
 * @example
 * api.use(signedCursors(core.cursors))
 */
export function signedCursors(cursors: CursorSeal): Middleware {
  return async (ctx, next) => {
    const cursor = ctx.query.cursor
    // A repeated cursor (an array) is left to the route's own schema to refuse.
    if (typeof cursor === 'string') ctx.query = { ...ctx.query, cursor: cursors.open(cursor) }
    await next()
    const body = ctx.body as { nextCursor?: unknown } | undefined
    if (body !== null && typeof body === 'object' && typeof body.nextCursor === 'string') {
      ctx.body = { ...body, nextCursor: cursors.seal(body.nextCursor) }
    }
  }
}

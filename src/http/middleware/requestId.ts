import { randomUUID } from 'node:crypto'
import type { Middleware } from 'koa'

const SANE = /^[A-Za-z0-9._:-]{8,128}$/

/** Reuses a sane incoming X-Request-Id, else makes one; echoes it on every response. */
export function requestId(): Middleware {
  return async (ctx, next) => {
    const incoming = ctx.get('X-Request-Id')
    const id = SANE.test(incoming) ? incoming : randomUUID()
    ctx.state.requestId = id
    ctx.set('X-Request-Id', id)
    await next()
  }
}

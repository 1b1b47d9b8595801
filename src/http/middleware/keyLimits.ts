import type { Middleware } from 'koa'
import type { AppDeps } from '../appDeps.ts'
import { UnauthorizedError } from '../../domain/errors.ts'
import { rateLimit, rateLimitedError, rateLimitHeaders } from '../rateLimit.ts'
import { principalOf } from './auth.ts'

/** Failed authentications allowed per IP and rate-limit window. */
const AUTH_FAILURES_PER_WINDOW = 60
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])

/**
 * Runs `auth`; a failed authentication counts against the caller's IP, so guessing keys is rate
 * limited too (past the allowance the answer is a 429 instead of the 401).
 *
 * @example
 * api.use(countingAuthFailures(deps, authenticate({ accounts, sessions })))
 */
export function countingAuthFailures(deps: Pick<AppDeps, 'config' | 'rateLimitStore'>, auth: Middleware): Middleware {
  const policy = { name: 'authfail', limit: AUTH_FAILURES_PER_WINDOW, windowSeconds: deps.config.rateLimit.windowSeconds }
  return async (ctx, next) => {
    try {
      await auth(ctx, async () => {})
    } catch (err) {
      if (err instanceof UnauthorizedError || (err as { status?: number }).status === 401) {
        const hit = await deps.rateLimitStore.hit(`authfail:${ctx.ip}`, policy.limit, policy.windowSeconds * 1000).catch(() => undefined)
        if (hit && !hit.allowed) throw rateLimitedError(hit, rateLimitHeaders(ctx, policy, hit))
      }
      throw err
    }
    await next()
  }
}

/**
 * The per-key limit (per account for a session): one budget per key, whichever door it uses
 * (`/api/v1` or the tool server). Where the limiter's store is down, writes (money can move)
 * fail closed; reads go on.
 */
export function perKeyRateLimit(deps: Pick<AppDeps, 'config' | 'rateLimitStore' | 'logger'>): Middleware {
  const { perKey, windowSeconds } = deps.config.rateLimit
  return rateLimit({
    store: deps.rateLimitStore,
    policy: { name: 'key', limit: perKey, windowSeconds },
    keyOf: (ctx) => {
      const p = principalOf(ctx)
      return p.keyId ? `key:${p.keyId}` : `account:${p.accountId}`
    },
    failClosed: (ctx) => !SAFE_METHODS.has(ctx.method),
    logger: deps.logger,
  })
}

/**
 * Fixed-window rate limiting: each key gets `limit` hits per window; the window starts at the
 * key's first hit and ends `windowMs` later (so windows are per key, not aligned to the clock).
 * Chosen over GCRA for simplicity and because it maps directly onto Redis INCR + PEXPIRE.
 * Known trade-off: a client can burst up to 2x the limit across a window boundary.
 *
 * Headers follow draft-ietf-httpapi-ratelimit-headers (structured fields):
 *   RateLimit-Policy: "<name>";q=<limit>;w=<windowSeconds>
 *   RateLimit: "<name>";r=<remaining>;t=<seconds until reset>
 */
import { createHash } from 'node:crypto'
import type { DefaultContext, DefaultState, Middleware, ParameterizedContext } from 'koa'
import type { Redis } from 'ioredis'
import { RateLimitedError, ServiceUnavailableError } from '../domain/errors.ts'

export interface RateLimitResult {
  allowed: boolean
  /** Hits left in the current window (0 once exhausted). */
  remaining: number
  /** Milliseconds until the current window ends. */
  resetMs: number
}

export interface RateLimitStore {
  /** Counts one hit against `key` (denied hits count too) and reports the window's state. */
  hit(key: string, limit: number, windowMs: number): Promise<RateLimitResult>
}

export interface RateLimitPolicy {
  /** Appears in headers and in the store key; letters, digits and `_ - . :` only. */
  name: string
  limit: number
  windowSeconds: number
}

/** The one logger method used here; a pino Logger fits. */
export interface WarnLogger {
  warn(obj: object, msg: string): void
}

function toResult(count: number, limit: number, resetMs: number): RateLimitResult {
  return { allowed: count <= limit, remaining: Math.max(0, limit - count), resetMs: Math.max(0, resetMs) }
}

export interface MemoryRateLimitStore extends RateLimitStore {
  /** Drops expired windows now (also runs every `sweepIntervalMs`). */
  sweep(): void
  /** Number of live keys held. */
  size(): number
  /** Stops the sweep timer. */
  close(): void
}

/**
 * Single-process store. Memory stays bounded: expired windows are swept periodically by an
 * unref'd timer, and past `maxKeys` the oldest windows are dropped (which resets those keys).
 *
 * @example
 * const store = createMemoryRateLimitStore()
 * await store.hit('ip:1.2.3.4', 100, 60_000) // { allowed: true, remaining: 99, resetMs: 60000 }
 */
export function createMemoryRateLimitStore({
  now = Date.now,
  sweepIntervalMs = 60_000,
  maxKeys = 100_000,
}: { now?: () => number; sweepIntervalMs?: number; maxKeys?: number } = {}): MemoryRateLimitStore {
  // Map iteration is insertion order and a new window re-inserts its key, so the first
  // entries are the oldest windows.
  const windows = new Map<string, { count: number; resetAt: number }>()

  function sweep(): void {
    const t = now()
    for (const [key, w] of windows) if (w.resetAt <= t) windows.delete(key)
  }

  const timer = setInterval(sweep, sweepIntervalMs)
  timer.unref() // never keeps the process alive

  return {
    async hit(key, limit, windowMs) {
      const t = now()
      let w = windows.get(key)
      if (!w || w.resetAt <= t) {
        windows.delete(key)
        if (windows.size >= maxKeys) {
          sweep()
          for (const oldest of windows.keys()) {
            if (windows.size < maxKeys) break
            windows.delete(oldest)
          }
        }
        w = { count: 0, resetAt: t + windowMs }
        windows.set(key, w)
      }
      w.count += 1
      return toResult(w.count, limit, w.resetAt - t)
    },
    sweep,
    size: () => windows.size,
    close: () => clearInterval(timer),
  }
}

// One round trip, atomic: the first hit of a window sets its expiry. The TTL check repairs a
// key that somehow has no expiry (e.g. PERSISTed by hand), which would otherwise block forever.
const HIT_SCRIPT = `
local count = redis.call('INCR', KEYS[1])
if count == 1 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {count, ttl}
`
const HIT_SCRIPT_SHA = createHash('sha1').update(HIT_SCRIPT).digest('hex')

/**
 * Store shared by every node through Redis (keys `rl:<key>`). Each hit is one EVALSHA
 * (falling back to EVAL when the script is not cached). A hit that takes longer than
 * `timeoutMs` rejects, so a stalled Redis makes the middleware fail open/closed promptly
 * instead of queueing requests behind ioredis' reconnect logic.
 *
 * @example
 * const store = createRedisRateLimitStore(new Redis(config.redisUrl))
 */
export function createRedisRateLimitStore(redis: Redis, { timeoutMs = 1000 }: { timeoutMs?: number } = {}): RateLimitStore {
  async function run(key: string, windowMs: number): Promise<unknown> {
    const redisKey = `rl:${key}`
    try {
      return await redis.evalsha(HIT_SCRIPT_SHA, 1, redisKey, windowMs)
    } catch (err) {
      if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw err
      return await redis.eval(HIT_SCRIPT, 1, redisKey, windowMs)
    }
  }

  return {
    async hit(key, limit, windowMs) {
      let timer: NodeJS.Timeout | undefined
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`Rate limit store timed out after ${timeoutMs} ms`)), timeoutMs)
      })
      try {
        const reply = await Promise.race([run(key, Math.max(1, Math.round(windowMs))), timeout])
        if (!Array.isArray(reply) || typeof reply[0] !== 'number' || typeof reply[1] !== 'number') {
          throw new Error('Unexpected reply from rate limit script')
        }
        return toResult(reply[0], limit, reply[1])
      } finally {
        clearTimeout(timer)
      }
    },
  }
}

function withListItem(existing: unknown, item: string): string {
  const prior = Array.isArray(existing) ? existing.join(', ') : typeof existing === 'string' ? existing : ''
  return prior === '' ? item : `${prior}, ${item}`
}

/**
 * `RateLimit-Policy` and `RateLimit` for one policy's hit. Both are structured-field lists: a
 * second limiter on the same request (per IP, then per key) adds its own item instead of
 * replacing the first one's.
 */
export function rateLimitHeaders(
  ctx: { response: { get(field: string): unknown } },
  { name, limit, windowSeconds }: RateLimitPolicy,
  result: RateLimitResult,
): Record<'RateLimit-Policy' | 'RateLimit', string> {
  return {
    'RateLimit-Policy': withListItem(ctx.response.get('RateLimit-Policy'), `"${name}";q=${limit};w=${windowSeconds}`),
    RateLimit: withListItem(ctx.response.get('RateLimit'), `"${name}";r=${result.remaining};t=${Math.ceil(result.resetMs / 1000)}`),
  }
}

/** The 429 of a policy's refused hit, carrying `Retry-After` and the rate-limit headers (kept even if a handler resets ctx headers). */
export function rateLimitedError(result: RateLimitResult, headers: Record<string, string>): RateLimitedError {
  const err = new RateLimitedError({ retryAfterSeconds: Math.max(1, Math.ceil(result.resetMs / 1000)) })
  if (err.headers) Object.assign(err.headers, headers)
  return err
}

const POLICY_NAME_RE = /^[A-Za-z0-9_.:-]+$/

/**
 * Koa middleware counting one hit per request against `keyOf(ctx)` (skipped when undefined).
 * Sets RateLimit-Policy / RateLimit on every counted response, throws RateLimitedError (429,
 * with the same headers) when over the limit. If the store fails, the request is refused with
 * 503 when `failClosed(ctx)` is true, otherwise let through with a warning.
 *
 * @example
 * router.use(rateLimit({
 *   store,
 *   policy: { name: 'per-key', limit: 1200, windowSeconds: 60 },
 *   keyOf: (ctx) => ctx.state.apiKeyId,
 *   failClosed: (ctx) => ctx.method !== 'GET',
 *   logger,
 * }))
 */
export function rateLimit<StateT = DefaultState, ContextT = DefaultContext>({
  store,
  policy,
  keyOf,
  failClosed,
  logger,
}: {
  store: RateLimitStore
  policy: RateLimitPolicy
  keyOf: (ctx: ParameterizedContext<StateT, ContextT>) => string | undefined
  failClosed?: (ctx: ParameterizedContext<StateT, ContextT>) => boolean
  logger?: WarnLogger
}): Middleware<StateT, ContextT> {
  const { name, limit, windowSeconds } = policy
  if (!POLICY_NAME_RE.test(name)) throw new Error(`Rate limit policy name must match ${POLICY_NAME_RE}`)
  if (!Number.isSafeInteger(limit) || limit < 1) throw new Error('Rate limit must be a positive integer')
  if (!Number.isSafeInteger(windowSeconds) || windowSeconds < 1) throw new Error('Rate limit window must be a positive integer of seconds')
  const windowMs = windowSeconds * 1000

  return async (ctx, next) => {
    const id = keyOf(ctx)
    if (id === undefined) return next()

    let result: RateLimitResult
    try {
      result = await store.hit(`${name}:${id}`, limit, windowMs)
    } catch (err) {
      if (failClosed?.(ctx)) {
        throw new ServiceUnavailableError('Rate limiter unavailable; retry shortly.', {
          code: 'rate_limiter_unavailable',
          retryAfterSeconds: 1,
        })
      }
      logger?.warn({ err, policy: name }, 'Rate limit store failed; letting the request through')
      return next()
    }

    const headers = rateLimitHeaders(ctx, policy, result)
    ctx.set(headers)
    if (!result.allowed) throw rateLimitedError(result, headers)
    return next()
  }
}

import { spawnSync } from 'node:child_process'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { fileURLToPath } from 'node:url'
import Koa from 'koa'
import { afterEach, describe, expect, it } from 'vitest'
import { ServiceError } from '../domain/errors.ts'
import type { Redis } from 'ioredis'
import { createMemoryRateLimitStore, createRedisRateLimitStore, rateLimit, type RateLimitStore, type WarnLogger } from './rateLimit.ts'

function fakeClock(start = 1_000_000) {
  let t = start
  return { now: () => t, advance: (ms: number) => void (t += ms) }
}

describe('createMemoryRateLimitStore', () => {
  it('allows `limit` hits per window, then denies until the window ends', async () => {
    const clock = fakeClock()
    const store = createMemoryRateLimitStore({ now: clock.now })
    expect(await store.hit('k', 3, 10_000)).toEqual({ allowed: true, remaining: 2, resetMs: 10_000 })
    clock.advance(1_000)
    expect(await store.hit('k', 3, 10_000)).toEqual({ allowed: true, remaining: 1, resetMs: 9_000 })
    expect(await store.hit('k', 3, 10_000)).toEqual({ allowed: true, remaining: 0, resetMs: 9_000 })
    expect(await store.hit('k', 3, 10_000)).toEqual({ allowed: false, remaining: 0, resetMs: 9_000 })
    clock.advance(8_999)
    expect((await store.hit('k', 3, 10_000)).allowed).toBe(false)
    clock.advance(1) // exactly at the end of the window: a new one starts
    expect(await store.hit('k', 3, 10_000)).toEqual({ allowed: true, remaining: 2, resetMs: 10_000 })
    store.close()
  })

  it('keeps keys independent', async () => {
    const store = createMemoryRateLimitStore({ now: fakeClock().now })
    await store.hit('a', 1, 1_000)
    expect((await store.hit('a', 1, 1_000)).allowed).toBe(false)
    expect((await store.hit('b', 1, 1_000)).allowed).toBe(true)
    store.close()
  })

  it('sweeps expired windows', async () => {
    const clock = fakeClock()
    const store = createMemoryRateLimitStore({ now: clock.now })
    await store.hit('short', 5, 1_000)
    await store.hit('long', 5, 60_000)
    expect(store.size()).toBe(2)
    clock.advance(1_000)
    store.sweep()
    expect(store.size()).toBe(1)
    clock.advance(59_000)
    store.sweep()
    expect(store.size()).toBe(0)
    store.close()
  })

  it('stays within maxKeys by dropping the oldest windows', async () => {
    const clock = fakeClock()
    const store = createMemoryRateLimitStore({ now: clock.now, maxKeys: 3 })
    for (const k of ['a', 'b', 'c', 'd', 'e']) {
      await store.hit(k, 1, 60_000)
      clock.advance(1)
    }
    expect(store.size()).toBe(3)
    // 'a' and 'b' were dropped, so they start fresh; 'e' is still counted.
    expect((await store.hit('e', 1, 60_000)).allowed).toBe(false)
    expect((await store.hit('a', 1, 60_000)).allowed).toBe(true)
    store.close()
  })

  it('does not keep the process alive', () => {
    const moduleUrl = new URL('./rateLimit.ts', import.meta.url).href
    const started = Date.now()
    const child = spawnSync(
      process.execPath,
      ['--input-type=module', '-e', `import { createMemoryRateLimitStore } from ${JSON.stringify(moduleUrl)}; await createMemoryRateLimitStore({ sweepIntervalMs: 100 }).hit('k', 1, 1000)`],
      { timeout: 15_000, encoding: 'utf8', cwd: fileURLToPath(new URL('../..', import.meta.url)) },
    )
    expect(child.error).toBeUndefined()
    expect(child.stderr).toBe('')
    expect(child.status).toBe(0)
    expect(Date.now() - started).toBeLessThan(10_000)
  })
})

describe('createRedisRateLimitStore (stubbed client; real Redis in test/redisRateLimit.test.ts)', () => {
  it('falls back from EVALSHA to EVAL when the script is not cached, with the rl: prefix', async () => {
    const calls: unknown[][] = []
    const stub = {
      evalsha: async (...args: unknown[]) => {
        calls.push(['evalsha', ...args])
        throw new Error('NOSCRIPT No matching script. Please use EVAL.')
      },
      eval: async (...args: unknown[]) => {
        calls.push(['eval', ...args])
        return [1, 1000]
      },
    }
    const store = createRedisRateLimitStore(stub as unknown as Redis)
    expect(await store.hit('api:x', 5, 1000)).toEqual({ allowed: true, remaining: 4, resetMs: 1000 })
    expect(calls.map((c) => [c[0], c[2], c[3], c[4]])).toEqual([
      ['evalsha', 1, 'rl:api:x', 1000],
      ['eval', 1, 'rl:api:x', 1000],
    ])
  })

  it('passes other errors through and rejects malformed replies', async () => {
    const down = { evalsha: async () => Promise.reject(new Error('Connection is closed.')), eval: async () => [1, 1] }
    await expect(createRedisRateLimitStore(down as unknown as Redis).hit('k', 1, 1000)).rejects.toThrow(/closed/)
    const odd = { evalsha: async () => 'OK', eval: async () => 'OK' }
    await expect(createRedisRateLimitStore(odd as unknown as Redis).hit('k', 1, 1000)).rejects.toThrow(/Unexpected reply/)
  })
})

// --- middleware, through a real koa app over HTTP ---

const servers: Server[] = []
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))))
})

function errorMiddleware({ clearHeadersFirst = false } = {}): Koa.Middleware {
  return async (ctx, next) => {
    try {
      await next()
    } catch (err) {
      if (!(err instanceof ServiceError)) throw err
      // Simulates a stricter handler that resets whatever headers were set before the error.
      if (clearHeadersFirst) for (const h of ctx.response.headers ? Object.keys(ctx.response.headers) : []) ctx.remove(h)
      ctx.status = err.status
      ctx.body = { error: err.message, code: err.code }
      if (err.headers) ctx.set(err.headers)
    }
  }
}

async function serve(...middleware: Koa.Middleware[]): Promise<string> {
  const app = new Koa()
  app.silent = true
  for (const m of middleware) app.use(m)
  app.use((ctx) => {
    ctx.body = { ok: true }
  })
  const server = createServer(app.callback())
  servers.push(server)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

const byHeader: (ctx: Koa.ParameterizedContext) => string | undefined = (ctx) => ctx.get('x-client') || undefined
const failingStore: RateLimitStore = {
  hit: async () => {
    throw new Error('connect ECONNREFUSED 127.0.0.1:6379')
  },
}

function recordingLogger(): WarnLogger & { calls: Array<{ obj: object; msg: string }> } {
  const calls: Array<{ obj: object; msg: string }> = []
  return { calls, warn: (obj, msg) => void calls.push({ obj, msg }) }
}

describe('rateLimit middleware', () => {
  it('sets RateLimit-Policy and RateLimit on allowed responses', async () => {
    const store = createMemoryRateLimitStore({ now: fakeClock().now })
    const url = await serve(errorMiddleware(), rateLimit({ store, policy: { name: 'api', limit: 3, windowSeconds: 60 }, keyOf: byHeader }))
    const res = await fetch(url, { headers: { 'x-client': 'c1' } })
    expect(res.status).toBe(200)
    expect(res.headers.get('ratelimit-policy')).toBe('"api";q=3;w=60')
    expect(res.headers.get('ratelimit')).toBe('"api";r=2;t=60')
    const res2 = await fetch(url, { headers: { 'x-client': 'c1' } })
    expect(res2.headers.get('ratelimit')).toBe('"api";r=1;t=60')
    store.close()
  })

  it('rounds the reset up to whole seconds', async () => {
    const clock = fakeClock()
    const store = createMemoryRateLimitStore({ now: clock.now })
    const url = await serve(errorMiddleware(), rateLimit({ store, policy: { name: 'api', limit: 3, windowSeconds: 60 }, keyOf: byHeader }))
    await fetch(url, { headers: { 'x-client': 'c1' } })
    clock.advance(58_500)
    expect((await fetch(url, { headers: { 'x-client': 'c1' } })).headers.get('ratelimit')).toBe('"api";r=1;t=2')
    store.close()
  })

  it('answers 429 with Retry-After and the RateLimit headers once over the limit', async () => {
    const clock = fakeClock()
    const store = createMemoryRateLimitStore({ now: clock.now })
    const url = await serve(errorMiddleware(), rateLimit({ store, policy: { name: 'api', limit: 2, windowSeconds: 30 }, keyOf: byHeader }))
    const get = () => fetch(url, { headers: { 'x-client': 'c1' } })
    expect((await get()).status).toBe(200)
    clock.advance(10_000)
    expect((await get()).status).toBe(200)
    const res = await get()
    expect(res.status).toBe(429)
    expect(res.headers.get('retry-after')).toBe('20')
    expect(res.headers.get('ratelimit-policy')).toBe('"api";q=2;w=30')
    expect(res.headers.get('ratelimit')).toBe('"api";r=0;t=20')
    expect(await res.json()).toMatchObject({ code: 'rate_limited' })
    // Another client is unaffected.
    expect((await fetch(url, { headers: { 'x-client': 'c2' } })).status).toBe(200)
    // After the window the client is allowed again.
    clock.advance(20_000)
    expect((await get()).status).toBe(200)
    store.close()
  })

  it('keeps the RateLimit headers on the 429 even if the error handler resets headers', async () => {
    const store = createMemoryRateLimitStore({ now: fakeClock().now })
    const url = await serve(
      errorMiddleware({ clearHeadersFirst: true }),
      rateLimit({ store, policy: { name: 'api', limit: 1, windowSeconds: 5 }, keyOf: byHeader }),
    )
    await fetch(url, { headers: { 'x-client': 'c1' } })
    const res = await fetch(url, { headers: { 'x-client': 'c1' } })
    expect(res.status).toBe(429)
    expect(res.headers.get('retry-after')).toBe('5')
    expect(res.headers.get('ratelimit-policy')).toBe('"api";q=1;w=5')
    expect(res.headers.get('ratelimit')).toBe('"api";r=0;t=5')
    store.close()
  })

  it('Retry-After is at least 1 second', async () => {
    const store: RateLimitStore = { hit: async () => ({ allowed: false, remaining: 0, resetMs: 0 }) }
    const url = await serve(errorMiddleware(), rateLimit({ store, policy: { name: 'api', limit: 1, windowSeconds: 5 }, keyOf: () => 'x' }))
    const res = await fetch(url)
    expect(res.status).toBe(429)
    expect(res.headers.get('retry-after')).toBe('1')
  })

  it('skips requests whose key is undefined: no counting, no headers', async () => {
    const store = createMemoryRateLimitStore({ now: fakeClock().now })
    const url = await serve(errorMiddleware(), rateLimit({ store, policy: { name: 'api', limit: 1, windowSeconds: 60 }, keyOf: byHeader }))
    for (let i = 0; i < 3; i++) {
      const res = await fetch(url)
      expect(res.status).toBe(200)
      expect(res.headers.get('ratelimit')).toBeNull()
      expect(res.headers.get('ratelimit-policy')).toBeNull()
    }
    expect(store.size()).toBe(0)
    store.close()
  })

  it('lists every policy when limiters are stacked', async () => {
    const store = createMemoryRateLimitStore({ now: fakeClock().now })
    const url = await serve(
      errorMiddleware(),
      rateLimit({ store, policy: { name: 'ip', limit: 10, windowSeconds: 60 }, keyOf: () => 'ip-1' }),
      rateLimit({ store, policy: { name: 'key', limit: 2, windowSeconds: 10 }, keyOf: byHeader }),
    )
    const res = await fetch(url, { headers: { 'x-client': 'c1' } })
    expect(res.headers.get('ratelimit-policy')).toBe('"ip";q=10;w=60, "key";q=2;w=10')
    expect(res.headers.get('ratelimit')).toBe('"ip";r=9;t=60, "key";r=1;t=10')
    await fetch(url, { headers: { 'x-client': 'c1' } })
    const limited = await fetch(url, { headers: { 'x-client': 'c1' } })
    expect(limited.status).toBe(429)
    expect(limited.headers.get('ratelimit')).toBe('"ip";r=7;t=60, "key";r=0;t=10')
    store.close()
  })

  it('fails open by default when the store throws, and logs a warning', async () => {
    const logger = recordingLogger()
    const url = await serve(
      errorMiddleware(),
      rateLimit({ store: failingStore, policy: { name: 'api', limit: 1, windowSeconds: 60 }, keyOf: () => 'x', logger }),
    )
    const res = await fetch(url)
    expect(res.status).toBe(200)
    expect(res.headers.get('ratelimit')).toBeNull()
    expect(logger.calls).toHaveLength(1)
    expect(logger.calls[0]!.obj).toMatchObject({ policy: 'api', err: expect.any(Error) })
  })

  it('fails open silently without a logger', async () => {
    const url = await serve(errorMiddleware(), rateLimit({ store: failingStore, policy: { name: 'api', limit: 1, windowSeconds: 60 }, keyOf: () => 'x' }))
    expect((await fetch(url)).status).toBe(200)
  })

  it('fails closed with 503 rate_limiter_unavailable where failClosed(ctx) says so', async () => {
    const logger = recordingLogger()
    const url = await serve(
      errorMiddleware(),
      rateLimit({
        store: failingStore,
        policy: { name: 'api', limit: 1, windowSeconds: 60 },
        keyOf: () => 'x',
        failClosed: (ctx) => ctx.method !== 'GET',
        logger,
      }),
    )
    const res = await fetch(url, { method: 'POST' })
    expect(res.status).toBe(503)
    expect(res.headers.get('retry-after')).toBe('1')
    expect(await res.json()).toEqual({ error: 'Rate limiter unavailable; retry shortly.', code: 'rate_limiter_unavailable' })
    expect((await fetch(url)).status).toBe(200) // GET still fails open
    expect(logger.calls).toHaveLength(1)
  })

  it('rejects invalid policies at construction', () => {
    const store = failingStore
    const keyOf = () => 'x'
    expect(() => rateLimit({ store, keyOf, policy: { name: 'has "quote"', limit: 1, windowSeconds: 1 } })).toThrow(/name/)
    expect(() => rateLimit({ store, keyOf, policy: { name: 'ok', limit: 0, windowSeconds: 1 } })).toThrow(/positive/)
    expect(() => rateLimit({ store, keyOf, policy: { name: 'ok', limit: 1, windowSeconds: 0.5 } })).toThrow(/window/)
  })
})

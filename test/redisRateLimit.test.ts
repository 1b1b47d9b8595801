import { randomBytes } from 'node:crypto'
import { createServer, type Server } from 'node:net'
import { Redis } from 'ioredis'
import { afterAll, describe, expect, it } from 'vitest'
import { createRedisRateLimitStore } from '../src/http/rateLimit.ts'

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'
const run = `test-${Date.now()}-${randomBytes(4).toString('hex')}`

function connect(url = REDIS_URL): Redis {
  return new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1, connectTimeout: 2_000, retryStrategy: () => null })
}

async function probe(): Promise<string | undefined> {
  const client = connect()
  let lastError: Error | undefined
  client.on('error', (err: Error) => void (lastError = err))
  try {
    await client.connect()
    await client.ping()
    return undefined
  } catch (err) {
    // connect() only says "Connection is closed."; the socket error says why.
    return (lastError ?? (err as Error)).message
  } finally {
    client.disconnect()
  }
}

const unreachable = await probe()
if (unreachable !== undefined) {
  console.warn(`Skipping Redis rate limit tests: Redis at ${REDIS_URL} is unreachable (${unreachable}). Start one or set REDIS_URL.`)
}

describe.skipIf(unreachable !== undefined)('createRedisRateLimitStore (real Redis)', () => {
  const clients: Redis[] = []
  function client(): Redis {
    const c = connect()
    clients.push(c)
    return c
  }

  afterAll(async () => {
    const c = clients[0]
    if (c) {
      let cursor = '0'
      do {
        const [next, keys] = await c.scan(cursor, 'MATCH', `rl:${run}:*`, 'COUNT', 1000)
        if (keys.length) await c.del(...keys)
        cursor = next
      } while (cursor !== '0')
    }
    for (const c of clients) c.disconnect()
  })

  it('counts within a window and reports remaining and reset', async () => {
    const redis = client()
    const store = createRedisRateLimitStore(redis)
    const key = `${run}:basic`
    const first = await store.hit(key, 3, 10_000)
    expect(first.allowed).toBe(true)
    expect(first.remaining).toBe(2)
    expect(first.resetMs).toBeGreaterThan(9_000)
    expect(first.resetMs).toBeLessThanOrEqual(10_000)
    expect((await store.hit(key, 3, 10_000)).remaining).toBe(1)
    expect((await store.hit(key, 3, 10_000)).remaining).toBe(0)
    expect(await store.hit(key, 3, 10_000)).toMatchObject({ allowed: false, remaining: 0 })
    expect(await redis.get(`rl:${key}`)).toBe('4')
    const ttl = await redis.pttl(`rl:${key}`)
    expect(ttl).toBeGreaterThan(0)
    expect(ttl).toBeLessThanOrEqual(10_000)
  })

  it('is atomic: of 200 concurrent hits exactly `limit` are allowed', async () => {
    const store = createRedisRateLimitStore(client())
    const key = `${run}:concurrent`
    const results = await Promise.all(Array.from({ length: 200 }, () => store.hit(key, 50, 30_000)))
    expect(results.filter((r) => r.allowed)).toHaveLength(50)
    // Every remaining value from 49 down to 0 was handed out exactly once among allowed hits.
    expect(results.filter((r) => r.allowed).map((r) => r.remaining).sort((a, b) => a - b)).toEqual(Array.from({ length: 50 }, (_, i) => i))
  })

  it('starts a new window once the old one expires', async () => {
    const redis = client()
    const store = createRedisRateLimitStore(redis)
    const key = `${run}:expiry`
    expect((await store.hit(key, 1, 300)).allowed).toBe(true)
    expect((await store.hit(key, 1, 300)).allowed).toBe(false)
    await new Promise((resolve) => setTimeout(resolve, 400))
    expect(await redis.exists(`rl:${key}`)).toBe(0)
    const again = await store.hit(key, 1, 300)
    expect(again).toMatchObject({ allowed: true, remaining: 0 })
    expect(again.resetMs).toBeGreaterThan(200)
  })

  it('does not extend the window on later hits', async () => {
    const redis = client()
    const store = createRedisRateLimitStore(redis)
    const key = `${run}:fixed`
    await store.hit(key, 10, 1_000)
    await new Promise((resolve) => setTimeout(resolve, 300))
    const later = await store.hit(key, 10, 1_000)
    expect(later.resetMs).toBeLessThanOrEqual(750)
  })

  it('repairs a key that lost its expiry', async () => {
    const redis = client()
    const store = createRedisRateLimitStore(redis)
    const key = `${run}:persisted`
    await store.hit(key, 5, 10_000)
    await redis.persist(`rl:${key}`)
    const r = await store.hit(key, 5, 10_000)
    expect(r.remaining).toBe(3)
    expect(r.resetMs).toBe(10_000)
    expect(await redis.pttl(`rl:${key}`)).toBeGreaterThan(0)
  })

  it('shares one limit between two store instances (two nodes)', async () => {
    const nodeA = createRedisRateLimitStore(client())
    const nodeB = createRedisRateLimitStore(client())
    const key = `${run}:shared`
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? nodeA : nodeB).hit(key, 25, 30_000)),
    )
    expect(results.filter((r) => r.allowed)).toHaveLength(25)
    expect((await nodeA.hit(key, 25, 30_000)).allowed).toBe(false)
    expect((await nodeB.hit(key, 25, 30_000)).allowed).toBe(false)
  })

  it('rejects promptly when Redis does not answer', async () => {
    // A TCP server that accepts and never replies stands in for a stalled Redis.
    const sockets: import('node:net').Socket[] = []
    const silent: Server = createServer((s) => void sockets.push(s))
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
    const { port } = silent.address() as import('node:net').AddressInfo
    const stalled = new Redis({ host: '127.0.0.1', port, maxRetriesPerRequest: null, retryStrategy: () => null })
    stalled.on('error', () => {})
    try {
      const store = createRedisRateLimitStore(stalled, { timeoutMs: 200 })
      const started = Date.now()
      await expect(store.hit(`${run}:stalled`, 1, 1_000)).rejects.toThrow(/timed out/)
      expect(Date.now() - started).toBeLessThan(2_000)
    } finally {
      stalled.disconnect()
      for (const s of sockets) s.destroy()
      await new Promise((resolve) => silent.close(resolve))
    }
  })
})

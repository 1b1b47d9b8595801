import type { TestProject } from 'vitest/node'
import { Redis } from 'ioredis'
import pg from 'pg'
import { startEmbeddedPostgres, type EmbeddedPostgresHandle } from '../src/dev/embeddedPostgres.ts'
import { createLogger } from '../src/logger.ts'

declare module 'vitest' {
  export interface ProvidedContext {
    pgAdminUrl: string
    redisUrl: string | null
  }
}

async function reachablePostgres(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 })
  try {
    await client.connect()
    await client.query('select 1')
    return true
  } catch {
    return false
  } finally {
    await client.end().catch(() => {})
  }
}

async function reachableRedis(url: string): Promise<boolean> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: 1500, retryStrategy: () => null })
  try {
    await redis.connect()
    return (await redis.ping()) === 'PONG'
  } catch {
    return false
  } finally {
    redis.disconnect()
  }
}

let embedded: EmbeddedPostgresHandle | undefined

/**
 * Finds the Postgres and Redis the suite runs against: DATABASE_URL / REDIS_URL when set, else
 * the machine's local services, else an embedded Postgres (and no Redis: the Redis suites say so).
 * Each test file then creates its own database (test/support/db.ts).
 */
export default async function setup(project: TestProject) {
  const candidates = [process.env.DATABASE_URL, 'postgres://postgres@127.0.0.1:5432/postgres'].filter(
    (u): u is string => !!u,
  )
  let pgAdminUrl: string | undefined
  for (const url of candidates) {
    if (await reachablePostgres(url)) {
      pgAdminUrl = url
      break
    }
  }
  if (!pgAdminUrl) {
    embedded = await startEmbeddedPostgres({
      dataDir: '.test-data',
      logger: createLogger({ level: 'warn' }),
      mode: 'own',
    })
    pgAdminUrl = embedded.url
    console.warn(`[tests] no PostgreSQL reachable; using embedded Postgres at ${pgAdminUrl}`)
  }
  const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'
  const redisOk = await reachableRedis(redisUrl)
  if (!redisOk) {
    console.warn(`[tests] Redis not reachable at ${redisUrl}: the Redis-backed suites will be skipped and say so`)
  }
  project.provide('pgAdminUrl', pgAdminUrl)
  project.provide('redisUrl', redisOk ? redisUrl : null)
  return async () => {
    await embedded?.stop()
  }
}

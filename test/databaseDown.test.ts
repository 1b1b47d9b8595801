import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { apiClient, type Api, type ApiResponse } from './support/app.ts'
import { postgresBinDir, startPgCluster, type PgCluster } from './support/pgCluster.ts'
import { adminCreateAccount, startServer, stopServer, serverCleanup, type ServerProcess } from './support/server.ts'
import { waitFor } from './support/waitFor.ts'

/*
 * A database that is simply down (no standby): a Postgres cluster of the test's own, stopped
 * under a running node, then started again. While it is down every request that needs it answers
 * 503 `database_unavailable` with Retry-After, promptly; once it is back the same node carries on
 * by itself, and a client's retry with its Idempotency-Key gets its answer, once.
 */
const hasPostgres = postgresBinDir() !== undefined
if (!hasPostgres) console.warn('test/databaseDown.test.ts: no Postgres server binaries under /usr/lib/postgresql; skipped')

const { servers, cleanups } = serverCleanup()
let cluster: PgCluster
let node: ServerProcess
let api: Api

/** A request that must be answered (whatever the answer) within 10 s: a hang fails the test. */
const call = (method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<ApiResponse> =>
  Promise.race([
    api(method, path, body, headers),
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${method} ${path} hung`)), 10_000).unref()),
  ])

describe.skipIf(!hasPostgres)('the database is down, then back', () => {
  beforeAll(async () => {
    cluster = await startPgCluster()
    cleanups.push(() => cluster.destroy())
    const dataDir = mkdtempSync(join(tmpdir(), 'alts-dbdown-'))
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }))
    const env = { DATABASE_URL: cluster.url, DATA_DIR: dataDir, LOG_LEVEL: 'warn', SHARD_LEASE_SECONDS: '3', RATE_LIMIT_PER_KEY: '1000000', RATE_LIMIT_PER_IP: '1000000' }
    node = await startServer(env)
    servers.push(node)
    const account = await adminCreateAccount(env)
    api = apiClient(`${node.url}/api/v1`, account.apiKey)
  }, 60_000)
  afterAll(async () => {
    if (node) await stopServer(node).catch(() => {})
  })

  it('503 database_unavailable with Retry-After while down; the same node carries on after; a keyed retry lands once', async () => {
    const before = await call('POST', '/agents', { name: 'before', model: 'gpt-4o-mini', skills: [] }, { 'idempotency-key': 'agent-before' })
    expect(before.status).toBe(201)

    await cluster.stop('immediate')
    const downSince = Date.now()
    const seen: Array<{ path: string; status: number; code?: string; retryAfter: string | null }> = []
    // Requests keep coming for 4 s of outage (longer than the shard lease): each is answered, each a 503 with Retry-After.
    while (Date.now() - downSince < 4_000) {
      for (const [method, path, body, headers] of [
        ['GET', '/agents'],
        ['POST', '/agents', { name: 'during', model: 'gpt-4o-mini', skills: [] }, { 'idempotency-key': 'agent-during' }],
        ['GET', `/agents/${before.body.id}`],
      ] as Array<[string, string, unknown?, Record<string, string>?]>) {
        const res = await call(method, path, body, headers)
        seen.push({ path, status: res.status, code: res.body?.code, retryAfter: res.headers.get('retry-after') })
      }
    }
    expect(seen.filter((s) => s.status !== 503 || s.code !== 'database_unavailable' || !/^\d+$/.test(s.retryAfter ?? ''))).toEqual([])
    const health = await call('GET', '/health')
    expect(health.status).toBe(503)

    await cluster.start()
    // The client's policy: retry with the same key after Retry-After until a 2xx.
    let during: ApiResponse | undefined
    await waitFor(async () => {
      during = await call('POST', '/agents', { name: 'during', model: 'gpt-4o-mini', skills: [] }, { 'idempotency-key': 'agent-during' })
      return during.status !== 503
    }, 20_000)
    expect(during!.status).toBe(201)
    const replay = await call('POST', '/agents', { name: 'during', model: 'gpt-4o-mini', skills: [] }, { 'idempotency-key': 'agent-during' })
    expect(replay.body.id).toBe(during!.body.id)

    // Nothing lost, nothing doubled: one agent per key.
    const list = await call('GET', '/agents')
    expect(list.status).toBe(200)
    expect(list.body.agents.map((a: { name: string }) => a.name).sort()).toEqual(['before', 'during'])
    // The same process, healthy again, holding its shards again (its runtime carried on).
    expect(node.child.exitCode).toBe(null)
    await waitFor(async () => (await call('GET', '/health')).status === 200, 10_000)
    const db = new pg.Client({ connectionString: cluster.url })
    await db.connect()
    try {
      await waitFor(async () => {
        const { rows } = await db.query<{ n: number }>(
          `select count(*)::int as n from shard_lease l join service_node s on s.id = l.owner where s.pid = $1 and l.expires_at > now()`,
          [node.child.pid],
        )
        return rows[0]!.n === 64
      }, 15_000)
    } finally {
      await db.end()
    }
    expect(node.logs()).not.toMatch(/unhandled error/)
    // The pollers backed off while it was down (every 250 ms they would have failed some 20 times).
    const count = (msg: string) => node.logs().split('\n').filter((l) => l.includes(`"msg":"${msg}"`)).length
    expect(count('actor runtime poll failed')).toBeGreaterThan(0)
    expect(count('actor runtime poll failed')).toBeLessThanOrEqual(8)
    expect(count('node bus not reconnected; trying again')).toBeLessThanOrEqual(6)
  }, 60_000)
})

import { execFile, execFileSync } from 'node:child_process'
import { chmodSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { primaryClient } from '../src/adapters/db/primaryHosts.ts'
import { apiClient, type Api, type ApiResponse } from './support/app.ts'
import { adminCreateAccount, startServer, stopServer, serverCleanup, type ServerProcess } from './support/server.ts'
import { waitFor } from './support/waitFor.ts'

const run = promisify(execFile)
const hasAutoctl = (() => {
  try {
    execFileSync('pg_autoctl', ['--version'], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
})()
if (!hasAutoctl) console.warn('test/dbPairService.test.ts: pg_autoctl is not installed (apt-get install postgresql-15-auto-failover); skipped')

/*
 * A node of the service on the replicated pair (DATABASE_URL naming both hosts), and the loss of
 * the pair's primary machine under it: the node answers 503 database_unavailable (or 409 while a
 * key's claim is settled) with Retry-After while no primary answers, never a 500 or a hang; then
 * it writes to the promoted standby by itself, the client's keyed retry lands once, and the
 * same process holds its shards again.
 */
const { servers, cleanups } = serverCleanup()

describe.skipIf(!hasAutoctl)('the service on the replicated pair', () => {
  const dir = mkdtempSync(join(tmpdir(), 'dbpairsvc-'))
  chmodSync(dir, 0o755) // run as root, the pair's processes run as the postgres OS user
  const pairEnv = { ...process.env, DBPAIR_TIMEOUT: '60', DBPAIR_DIR: join(dir, 'pair'), DBPAIR_PORT: String(30000 + Math.floor(Math.random() * 2000)) }
  const pair = (...args: string[]) => run('bash', ['scripts/dbpair.sh', ...args], { env: pairEnv, timeout: 150_000 })
  let url: string
  let node: ServerProcess
  let api: Api

  const call = (method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<ApiResponse> =>
    Promise.race([
      api(method, path, body, headers),
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${method} ${path} hung`)), 10_000).unref()),
    ])

  beforeAll(async () => {
    cleanups.push(async () => {
      await pair('destroy').catch(() => {})
      rmSync(dir, { recursive: true, force: true })
    })
    url = /^DATABASE_URL=(.+)$/m.exec((await pair('start')).stdout)![1]!
    const dataDir = join(dir, 'data')
    const env = { DATABASE_URL: url, DATA_DIR: dataDir, LOG_LEVEL: 'warn', SHARD_LEASE_SECONDS: '3' }
    node = await startServer(env)
    servers.push(node)
    api = apiClient(`${node.url}/api/v1`, (await adminCreateAccount(env)).apiKey)
  }, 150_000)
  afterAll(async () => {
    if (node) await stopServer(node).catch(() => {})
  })

  it('kill -9 of the primary machine: retryable answers while none answers, then the same node carries on; a keyed retry lands once', async () => {
    const agent = (name: string, key: string) => call('POST', '/agents', { name, model: 'gpt-4o-mini', skills: [] }, { 'idempotency-key': key })
    expect((await agent('before', 'k-before')).status).toBe(201)

    const { stdout: primary } = await pair('primary')
    await pair('crash', primary.trim())
    // The client's policy (docs/api.md): the same key after each answer's Retry-After, until a 2xx.
    const answers: Array<{ status: number; code?: string; retryAfter: string | null }> = []
    let after: ApiResponse | undefined
    await waitFor(async () => {
      after = await agent('after', 'k-after')
      answers.push({ status: after.status, code: after.body?.code, retryAfter: after.headers.get('retry-after') })
      if (after.status < 300) return true
      await new Promise((r) => setTimeout(r, 1000 * Number(after!.headers.get('retry-after') ?? 1)))
      return false
    }, 45_000)
    expect(after!.status).toBe(201)
    const refused = answers.filter((a) => a.status >= 300)
    expect(refused.filter((a) => !((a.status === 503 && a.code === 'database_unavailable') || (a.status === 409 && a.code === 'idempotency_key_in_progress')) || !a.retryAfter)).toEqual([])
    expect((await agent('after', 'k-after')).body.id).toBe(after!.body.id)

    const list = await call('GET', '/agents')
    expect(list.body.agents.map((a: { name: string }) => a.name).sort()).toEqual(['after', 'before'])
    expect(node.child.exitCode).toBe(null)
    const db = primaryClient(url)
    await db.connect()
    try {
      await waitFor(async () => {
        const { rows } = await db.query<{ n: number }>(
          `select count(*)::int as n from shard_lease l join service_node s on s.id = l.owner where s.pid = $1 and l.expires_at > now()`,
          [node.child.pid],
        )
        return rows[0]!.n === 64
      }, 20_000)
    } finally {
      await db.end()
    }
    expect(node.logs()).not.toMatch(/unhandled error/)
  }, 75_000)
})

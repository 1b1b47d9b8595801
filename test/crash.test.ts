import { mkdtempSync, rmSync, existsSync, lstatSync, readlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import pg from 'pg'
import { apiClient } from './support/app.ts'
import { startModelServer, type ModelServer } from './support/modelServer.ts'
import { waitFor } from './support/waitFor.ts'
import { GENERIC_RUN_GOAL } from '../src/domain/runs/startScheduledRun.ts'
import { createTestDatabase } from './support/db.ts'
import { adminCreateAccount, kill9, startServer, stopServer, serverCleanup } from './support/server.ts'

const { servers, cleanups } = serverCleanup()

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

describe('crash recovery with the real server (external Postgres)', () => {
  let env: Record<string, string>
  let db: pg.Pool
  let model: ModelServer
  beforeAll(async () => {
    model = await startModelServer()
    model.mock.on({ userMessage: GENERIC_RUN_GOAL, hasToolResult: false }, { content: 'Nothing to do.' })
    const database = await createTestDatabase()
    const dataDir = mkdtempSync(join(tmpdir(), 'alts-crash-'))
    env = { DATABASE_URL: database.url, DATA_DIR: dataDir, OPENAI_BASE_URL: model.baseUrl, OPENAI_API_KEY: 'test-key', RUN_MIN_INTERVAL_SECONDS: '1' }
    db = new pg.Pool({ connectionString: database.url, max: 2 })
    cleanups.push(async () => {
      await db.end()
      await database.drop()
      rmSync(dataDir, { recursive: true, force: true })
      await model.stop()
    })
  })

  it('a started agent is still running after kill -9 and restart; its overdue timer fires exactly once', { timeout: 180_000 }, async () => {
    let server = await startServer(env)
    servers.push(server)
    const { apiKey } = await adminCreateAccount(env)
    let api = apiClient(`${server.url}/api/v1`, apiKey)
    const created = await api('POST', '/agents', { name: 'survivor', model: 'gpt-4o-mini', skills: ['trading'], run_interval_seconds: 3 })
    expect(created.status).toBe(201)
    const id = created.body.id as string
    expect((await api('POST', `/agents/${id}/start`)).body.status).toBe('running')
    const runs = async () => (await db.query(`select count(*)::int as n from actor where kind = 'run' and parent_id = $1`, [id])).rows[0].n as number
    // The start's check ran the first run and armed the one timer, 3 s away.
    await waitFor(async () => (await runs()) === 1 && (await db.query('select 1 from actor_timer where actor_id = $1', [id])).rows.length === 1, 20_000)
    const { rows: before } = await db.query('select timer_key, generation from actor_timer where actor_id = $1', [id])
    expect(before).toMatchObject([{ timer_key: 'agent.due' }])
    const generation = before[0].generation as string

    await kill9(server)
    await sleep(3500) // past the timer's due time while nothing runs
    server = await startServer(env)
    servers.push(server)
    api = apiClient(`${server.url}/api/v1`, apiKey)
    const after = await api('GET', `/agents/${id}`)
    expect(after.body.status).toBe('running')

    // The overdue timer fired once at boot and started one run; the next is 3 s away, so the count is exactly 1.
    await waitFor(async () => (await runs()) === 2, 2000)
    await sleep(500)
    expect(await runs()).toBe(2)
    const { rows: fired } = await db.query(
      `select count(*)::int as n from actor_inbox where actor_id = $1 and dedupe_key = $2 and processed_at is not null`,
      [id, `timer:${id}:agent.due:${generation}`],
    )
    expect(fired[0].n).toBe(1)
    const { rows: journal } = await db.query(`select count(*)::int as n from actor_journal where actor_id = $1 and event->>'type' = 'agent.due'`, [id])
    expect(journal[0].n).toBe(1)
    expect((await api('POST', `/agents/${id}/stop`)).status).toBe(200)
    await stopServer(server)
  })
})

describe('crash recovery on embedded Postgres (no configuration)', () => {
  it('comes back after SIGKILL of the whole process group, and after a Postgres left running', { timeout: 180_000 }, async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'alts-embedded-'))
    cleanups.push(() => {
      // As root the cluster lives behind a symlink (see clusterDir); remove its target too.
      const link = join(dataDir, 'pg')
      if (lstatSync(link, { throwIfNoEntry: false })?.isSymbolicLink()) rmSync(dirname(readlinkSync(link)), { recursive: true, force: true })
      rmSync(dataDir, { recursive: true, force: true })
    })
    const env = { DATA_DIR: dataDir, DATABASE_URL: '', REDIS_URL: '' }
    let server = await startServer(env)
    servers.push(server)
    // The CLI attaches to the running server's embedded Postgres.
    const { apiKey } = await adminCreateAccount(env)
    let api = apiClient(`${server.url}/api/v1`, apiKey)
    const created = await api('POST', '/agents', { name: 'embedded', model: 'gpt-4o-mini', skills: [] })
    const id = created.body.id as string
    await api('POST', `/agents/${id}/start`)

    await kill9(server, { group: true })
    expect(existsSync(join(dataDir, 'pg', 'postmaster.pid'))).toBe(true) // stale after SIGKILL (through the symlink as root)
    server = await startServer(env)
    servers.push(server)
    api = apiClient(`${server.url}/api/v1`, apiKey)
    expect((await api('GET', `/agents/${id}`)).body.status).toBe('running')
    await api('POST', `/agents/${id}/stop`)

    // Only node dies: its Postgres child is left running on the data directory.
    await kill9(server, { group: false })
    server = await startServer(env)
    servers.push(server)
    api = apiClient(`${server.url}/api/v1`, apiKey)
    expect((await api('GET', `/agents/${id}`)).body.status).toBe('stopped')
    await stopServer(server)
    // A clean stop leaves no Postgres behind: the CLI must start its own (and stop it).
    expect(existsSync(join(dataDir, 'pg', 'postmaster.pid'))).toBe(false)
    const again = await adminCreateAccount(env)
    expect(again.apiKey).toMatch(/^cpk_/)
    expect(existsSync(join(dataDir, 'pg', 'postmaster.pid'))).toBe(false)
  })
})

import { mkdtempSync, rmSync, existsSync, lstatSync, readlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import pg from 'pg'
import { apiClient } from './support/app.ts'
import { createTestDatabase } from './support/db.ts'
import { adminCreateAccount, kill9, startServer, stopServer, serverCleanup } from './support/server.ts'

const { servers, cleanups } = serverCleanup()

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

describe('crash recovery with the real server (external Postgres)', () => {
  let env: Record<string, string>
  let db: pg.Pool
  beforeAll(async () => {
    const database = await createTestDatabase()
    const dataDir = mkdtempSync(join(tmpdir(), 'alts-crash-'))
    env = { DATABASE_URL: database.url, DATA_DIR: dataDir, AGENT_TICK_SECONDS: '3' }
    db = new pg.Pool({ connectionString: database.url, max: 2 })
    cleanups.push(async () => {
      await db.end()
      await database.drop()
      rmSync(dataDir, { recursive: true, force: true })
    })
  })

  it('a started agent is still running after kill -9 and restart; its overdue timer fires exactly once', { timeout: 180_000 }, async () => {
    let server = await startServer(env)
    servers.push(server)
    const { apiKey } = await adminCreateAccount(env)
    let api = apiClient(`${server.url}/api/v1`, apiKey)
    const created = await api('POST', '/agents', { name: 'survivor', model: 'gpt-4o-mini', skills: ['trading'] })
    expect(created.status).toBe(201)
    const id = created.body.id as string
    expect((await api('POST', `/agents/${id}/start`)).body.status).toBe('running')
    const { rows: before } = await db.query('select timer_key, generation from actor_timer where actor_id = $1', [id])
    expect(before).toHaveLength(1)
    const generation = before[0].generation as string

    await kill9(server)
    await sleep(3500) // past the tick's due time while nothing runs
    server = await startServer(env)
    servers.push(server)
    api = apiClient(`${server.url}/api/v1`, apiKey)
    const after = await api('GET', `/agents/${id}`)
    expect(after.body.status).toBe('running')

    // The overdue tick fired once at boot; the next one is 3 s away, so the count is exactly 1.
    const until = Date.now() + 2000
    let ticks = 0
    while (Date.now() < until) {
      const { rows } = await db.query(`select snapshot->'context'->>'ticks' as ticks from actor where id = $1`, [id])
      ticks = Number(rows[0].ticks)
      if (ticks > 0) break
      await sleep(50)
    }
    expect(ticks).toBe(1)
    const { rows: fired } = await db.query(
      `select count(*)::int as n from actor_inbox where actor_id = $1 and dedupe_key = $2 and processed_at is not null`,
      [id, `timer:${id}:xstate.after.tick.agent.running:${generation}`],
    )
    expect(fired[0].n).toBe(1)
    const { rows: journal } = await db.query(
      `select count(*)::int as n from actor_journal where actor_id = $1 and event->>'type' = 'xstate.after.tick.agent.running'`,
      [id],
    )
    expect(journal[0].n).toBe(1)
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

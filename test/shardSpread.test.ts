import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import pg from 'pg'
import { createTestDatabase } from './support/db.ts'
import { startServer, stopServer, serverCleanup, type ServerProcess } from './support/server.ts'
import { waitFor } from './support/waitFor.ts'

/*
 * `WORKERS=3` on one database, shard leases of 9 s (renewed every 3 s): the nodes split the 64
 * shards within one renewal of the last one's start, not after the first one held them all for
 * two renewals.
 */
const LEASE_SECONDS = 9
const RENEWAL_MS = (LEASE_SECONDS * 1000) / 3
const { servers, cleanups } = serverCleanup()
let primary: ServerProcess | undefined

afterAll(async () => {
  if (primary) await stopServer(primary).catch(() => {})
})

describe('shards are spread from the start', () => {
  it('three worker nodes hold 20 to 22 shards each within one renewal of the third one starting, and keep at most their share', async () => {
    const database = await createTestDatabase()
    const dataDir = mkdtempSync(join(tmpdir(), 'alts-spread-'))
    const db = new pg.Pool({ connectionString: database.url, max: 2 })
    cleanups.push(async () => {
      await db.end()
      await database.drop()
      rmSync(dataDir, { recursive: true, force: true })
    })
    const live = async () =>
      (await db.query<{ id: string; shards: number }>(
        `select n.id, (select count(*)::int from shard_lease l where l.owner = n.id and l.expires_at > now()) as shards
           from service_node n where n.stopped_at is null and n.expires_at > now() and not n.leaving`,
      ).catch(() => ({ rows: [] }))).rows
    primary = await startServer({ DATABASE_URL: database.url, DATA_DIR: dataDir, WORKERS: '3', SHARD_LEASE_SECONDS: String(LEASE_SECONDS), LOG_LEVEL: 'warn' })
    servers.push(primary)
    await waitFor(async () => (await live()).length === 3, 60_000)
    const thirdStarted = Date.now()
    const spread = (nodes: Array<{ shards: number }>) =>
      nodes.length === 3 && nodes.reduce((s, n) => s + n.shards, 0) === 64 && nodes.every((n) => n.shards >= 20 && n.shards <= 22)
    await waitFor(async () => spread(await live()), RENEWAL_MS)
    const spreadMs = Date.now() - thirdStarted
    // Once spread, no node takes more than its share (22) plus one over the next renewals.
    const until = Date.now() + RENEWAL_MS * 2
    while (Date.now() < until) {
      const nodes = await live()
      expect(nodes.filter((n) => n.shards > 23)).toEqual([])
      await new Promise((r) => setTimeout(r, 100))
    }
    expect(spread(await live())).toBe(true)
    console.info(`three nodes registered to shards spread: ${spreadMs} ms (renewal every ${RENEWAL_MS} ms)`)
  }, 90_000)
})

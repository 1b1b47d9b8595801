import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { inject } from 'vitest'
import { once } from 'node:events'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Server } from 'node:http'
import { loadConfig } from '../src/config.ts'
import { createLogger } from '../src/logger.ts'
import { createServices, type Services } from '../src/app/services.ts'
import { createApp } from '../src/http/app.ts'
import { createHttpServer } from '../src/http/server.ts'
import { apiClient } from './support/app.ts'
import { createTestDatabase } from './support/db.ts'

const redisUrl = inject('redisUrl')
if (!redisUrl) console.warn('[tests] multiNode.test.ts: the shared rate-limit case is skipped: it needs a reachable Redis (REDIS_URL or 127.0.0.1:6379)')

/** Waits for a condition (never for a fixed time), up to 20 s. */
async function until(check: () => boolean | Promise<boolean>): Promise<void> {
  const end = Date.now() + 20_000
  while (!(await check())) {
    if (Date.now() > end) throw new Error('timed out waiting')
    await new Promise((r) => setTimeout(r, 50))
  }
}

type Node = { url: string; services: Services; server: Server }
const nodes: Node[] = []
let drop: (() => Promise<void>) | undefined
let dataDir: string

async function startNode(databaseUrl: string): Promise<Node> {
  const config = loadConfig({
    DATABASE_URL: databaseUrl, REDIS_URL: redisUrl ?? undefined, DATA_DIR: dataDir, LOG_LEVEL: 'silent', PORT: '0',
    API_KEY_CACHE_SECONDS: '60', RATE_LIMIT_PER_KEY: '5', RATE_LIMIT_WINDOW_SECONDS: '60',
  })
  // Two nodes on one database on purpose. A waiter reads the row only every 10 minutes besides
  // the nodes' nudges (LISTEN/NOTIFY), so what it hears of another node's commit is the nudge.
  const services = await createServices(config, createLogger({ level: 'silent' }), { withChain: false, sharedDatabase: true, remotePollMs: 600_000 })
  await services.start()
  const server = createHttpServer(createApp(services), { logger: services.logger }).listen(0, '127.0.0.1')
  await once(server, 'listening')
  const addr = server.address()
  return { url: `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}/api/v1`, services, server }
}

describe('two nodes sharing Postgres (and Redis when there is one)', () => {
  beforeAll(async () => {
    const db = await createTestDatabase()
    drop = db.drop
    dataDir = mkdtempSync(join(tmpdir(), 'multinode-'))
    nodes.push(await startNode(db.url))
    nodes.push(await startNode(db.url))
  })
  afterAll(async () => {
    for (const n of nodes) {
      n.server.closeAllConnections()
      n.server.close()
      await n.services.close()
    }
    await drop?.()
    rmSync(dataDir, { recursive: true, force: true })
  })

  it('a key deleted on one node is refused at once on the other, despite its key cache (no Redis needed)', async () => {
    const [a, b] = nodes as [Node, Node]
    const { apiKey } = await a.services.core.createAccount({ name: 'multi' })
    const admin = apiClient(a.url, apiKey)
    const created = await admin('POST', '/keys', { name: 'doomed', scopes: ['read'] })
    const doomedOnB = apiClient(b.url, created.body.key)
    expect((await doomedOnB('GET', '/me')).status).toBe(200) // now cached on node B for 60 s
    expect((await admin('DELETE', `/keys/${created.body.id}`)).status).toBe(200)
    const until = Date.now() + 500
    let status = 200
    while (Date.now() < until && status === 200) {
      status = (await doomedOnB('GET', '/me')).status
      if (status === 200) await new Promise((r) => setTimeout(r, 10))
    }
    expect(status).toBe(401)
  })

  it('a request waiting on one node hears of a commit made on the other at once (LISTEN/NOTIFY), not at its next read', async () => {
    const [a, b] = nodes as [Node, Node]
    // Both nodes know of each other once each holds its half of the shards.
    await until(() => a.services.runtime.node().shards.length === 32 && b.services.runtime.node().shards.length === 32)
    const { apiKey } = await a.services.core.createAccount({ name: 'waiter' })
    const created = await apiClient(a.url, apiKey)('POST', '/agents', { name: 'w', model: 'gpt-4o-mini', skills: [] })
    expect(created.status).toBe(201)
    const id: string = created.body.id
    const started = Date.now()
    const waiting = a.services.runtime.waitFor(id, (e) => e.snapshot.value === 'running', 60_000)
    expect((await apiClient(b.url, apiKey)('POST', `/agents/${id}/start`)).status).toBe(200)
    const entry = await waiting
    expect(entry?.snapshot.value).toBe('running')
    // Neither the 60 s timeout nor the 10-minute read answered it: the nudge did.
    expect(Date.now() - started).toBeLessThan(30_000)
  })

  it.skipIf(!redisUrl)('rate limits are shared: the per-key budget spans both nodes', async () => {
    const [a, b] = nodes as [Node, Node]
    const { apiKey } = await a.services.core.createAccount({ name: 'limited' })
    const statuses: number[] = []
    for (let i = 0; i < 6; i++) statuses.push((await apiClient((i % 2 ? b : a).url, apiKey)('GET', '/me')).status)
    expect(statuses.slice(0, 5)).toEqual([200, 200, 200, 200, 200])
    expect(statuses[5]).toBe(429)
  })
})

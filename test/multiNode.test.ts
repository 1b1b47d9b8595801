import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { inject } from 'vitest'
import { once } from 'node:events'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Server } from 'node:http'
import { loadConfig } from '../src/config.ts'
import { createLogger } from '../src/logger.ts'
import { createServices, type Services } from '../src/services.ts'
import { createApp } from '../src/http/app.ts'
import { createHttpServer } from '../src/http/server.ts'
import { apiClient } from './support/app.ts'
import { createTestDatabase } from './support/db.ts'

const redisUrl = inject('redisUrl')
if (!redisUrl) console.warn('[tests] multiNode.test.ts skipped: it needs a reachable Redis (REDIS_URL or 127.0.0.1:6379)')

type Node = { url: string; services: Services; server: Server }
const nodes: Node[] = []
let drop: (() => Promise<void>) | undefined
let dataDir: string

async function startNode(databaseUrl: string): Promise<Node> {
  const config = loadConfig({
    DATABASE_URL: databaseUrl, REDIS_URL: redisUrl!, DATA_DIR: dataDir, LOG_LEVEL: 'silent', PORT: '0',
    API_KEY_CACHE_SECONDS: '60', RATE_LIMIT_PER_KEY: '5', RATE_LIMIT_WINDOW_SECONDS: '60',
  })
  // Two processes on one database on purpose: they must not take the boot lock.
  const services = await createServices(config, createLogger({ level: 'silent' }), { withChain: false, sharedDatabase: true })
  const server = createHttpServer(createApp(services), { logger: services.logger }).listen(0, '127.0.0.1')
  await once(server, 'listening')
  const addr = server.address()
  return { url: `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}/api/v1`, services, server }
}

describe.skipIf(!redisUrl)('two nodes sharing Postgres and Redis', () => {
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

  it('a key deleted on one node is refused at once on the other, despite its key cache', async () => {
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

  it('rate limits are shared: the per-key budget spans both nodes', async () => {
    const [a, b] = nodes as [Node, Node]
    const { apiKey } = await a.services.core.createAccount({ name: 'limited' })
    const statuses: number[] = []
    for (let i = 0; i < 6; i++) statuses.push((await apiClient((i % 2 ? b : a).url, apiKey)('GET', '/me')).status)
    expect(statuses.slice(0, 5)).toEqual([200, 200, 200, 200, 200])
    expect(statuses[5]).toBe(429)
  })
})

import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import pg from 'pg'
import { apiClient } from './support/app.ts'
import { waitFor } from './support/waitFor.ts'
import { createTestDatabase } from './support/db.ts'
import { startReceiver } from './support/webhookReceiver.ts'
import { adminCreateAccount, kill9, startServer, stopServer, serverCleanup } from './support/server.ts'

const { servers, cleanups } = serverCleanup()

describe('webhook delivery across a crash (the real server, kill -9)', () => {
  let env: Record<string, string>
  let db: pg.Pool
  let receiver: Awaited<ReturnType<typeof startReceiver>>
  beforeAll(async () => {
    receiver = await startReceiver()
    const database = await createTestDatabase()
    const dataDir = mkdtempSync(join(tmpdir(), 'alts-webhook-crash-'))
    // A request is abandoned after 2 s: a dead node's lease on its delivery runs out 5 s later.
    env = { DATABASE_URL: database.url, DATA_DIR: dataDir, WEBHOOK_POLL_MS: '50', WEBHOOK_TIMEOUT_SECONDS: '2', WEBHOOK_RETRY_BASE_SECONDS: '0.05' }
    db = new pg.Pool({ connectionString: database.url, max: 2 })
    cleanups.push(async () => {
      await db.end()
      await database.drop()
      rmSync(dataDir, { recursive: true, force: true })
      await receiver.close()
    })
  })

  it('a delivery in flight when the service is killed is delivered after the restart, under the same webhook-id', { timeout: 180_000 }, async () => {
    let server = await startServer(env)
    servers.push(server)
    const { apiKey } = await adminCreateAccount(env)
    let api = apiClient(`${server.url}/api/v1`, apiKey)
    const created = await api('POST', '/webhooks', { url: receiver.url(), events: ['swap.confirmed'] })
    expect(created.status).toBe(201)
    receiver.trust(created.body.secret)
    // The first request is held open: the service dies in the middle of it.
    receiver.answerWith((_r, n) => ({ status: n === 1 ? 0 : 200 }))
    expect((await api('POST', `/webhooks/${created.body.id}/test`)).status).toBe(202)
    await waitFor(() => receiver.received.length === 1, 10_000)
    await kill9(server, { group: false })

    server = await startServer(env)
    servers.push(server)
    api = apiClient(`${server.url}/api/v1`, apiKey)
    await waitFor(() => receiver.received.length === 2, 30_000)
    const [first, second] = receiver.received
    expect(second!.id).toBe(first!.id)
    expect(second!.payload).toEqual(first!.payload)
    await waitFor(async () => (await api('GET', `/webhooks/${created.body.id}/deliveries`)).body.deliveries[0]?.status === 'delivered')
    const { rows } = await db.query(`select status, attempts from webhook_delivery`)
    expect(rows).toEqual([{ status: 'delivered', attempts: 2 }])
    await stopServer(server)
  })
})

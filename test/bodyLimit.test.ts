import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { createTestDatabase } from './support/db.ts'
import { serverCleanup, startServer, type ServerProcess } from './support/server.ts'

// The server runs in a process of its own: in this process the client and the server would take
// turns on one event loop, and a reset of the connection mid-body would not show.
const { servers, cleanups } = serverCleanup()
let server: ServerProcess

beforeAll(async () => {
  const database = await createTestDatabase()
  const dataDir = mkdtempSync(join(tmpdir(), 'alts-body-'))
  cleanups.push(async () => {
    await database.drop()
    rmSync(dataDir, { recursive: true, force: true })
  })
  server = await startServer({ DATABASE_URL: database.url, DATA_DIR: dataDir, LOG_LEVEL: 'warn' })
  servers.push(server)
}, 120_000)

/** POSTs `body` with Node's fetch; the status and parsed body, or the network error's code. */
async function post(body: Buffer | ReadableStream<Uint8Array>) {
  try {
    const res = await fetch(`${server.url}/api/v1/agents`, { method: 'POST', headers: { 'content-type': 'application/json' }, body, duplex: 'half' } as RequestInit)
    return { status: res.status, body: JSON.parse(await res.text()) as { code?: string; error?: unknown } }
  } catch (err) {
    return { status: 0, body: { code: String((err as { cause?: { code?: string } }).cause?.code ?? err) } }
  }
}

describe('a body over the 1 MB limit', () => {
  it("sent with Node's fetch (3 MB, 20 times in a row) gets the 413 envelope every time, never a reset", { timeout: 120_000 }, async () => {
    const body = Buffer.alloc(3 * 1024 * 1024, 'a')
    for (let i = 0; i < 20; i++) {
      const res = await post(body)
      expect({ i, status: res.status, code: res.body.code, error: typeof res.body.error }).toEqual({ i, status: 413, code: 'payload_too_large', error: 'string' })
    }
  })

  it('streamed without a Content-Length (chunked) gets the 413 envelope too', { timeout: 60_000 }, async () => {
    for (let i = 0; i < 5; i++) {
      const res = await post(new Blob([Buffer.alloc(3 * 1024 * 1024, 'a')]).stream())
      expect({ i, status: res.status, code: res.body.code }).toEqual({ i, status: 413, code: 'payload_too_large' })
    }
  })
})

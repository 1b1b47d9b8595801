import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { once } from 'node:events'
import { connect } from 'node:net'
import type { RequestListener, Server } from 'node:http'
import { loadConfig } from '../../src/config.ts'
import { createLogger } from '../../src/logger.ts'
import { createServices, type Services } from '../../src/app/services.ts'
import { createApp } from '../../src/http/app.ts'
import { createHttpServer } from '../../src/http/server.ts'
import { createTestDatabase } from './db.ts'

export type TestApp = {
  url: string
  services: Services
  /** Creates an account with a key of all scopes; returns the key and a fetch bound to it. */
  account(opts?: { operator?: boolean; name?: string }): Promise<{ accountId: string; apiKey: string; api: Api }>
  close(): Promise<void>
}

export type ApiResponse = { status: number; headers: Headers; body: any }
export type Api = (method: string, path: string, body?: unknown, headers?: Record<string, string>) => Promise<ApiResponse>

/** A fetch against the app: JSON in, JSON out; `body` may be a raw string to send as is. */
export function apiClient(baseUrl: string, apiKey?: string): Api {
  return async (method, path, body, headers = {}) => {
    const res = await fetch(`${baseUrl}${path}`, {
      method,
      headers: {
        ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}),
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...headers,
      },
      ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
    })
    const text = await res.text()
    return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined }
  }
}

/** The real app in this process, on its own database, listening on a free port. */
export async function startTestApp(
  env: Record<string, string> = {},
  {
    withChain = false,
    logLines,
    wrapRequests,
    runtimePollMs = 100,
  }: {
    withChain?: boolean
    /** Collects the log's JSON lines (set LOG_LEVEL in `env`). */
    logLines?: string[]
    /** Wraps the server's request listener (test/support/statementCounter.ts runs each request in its own context). */
    wrapRequests?: (listener: RequestListener) => RequestListener
    /** How often the runtime polls for due timers, inboxes and effects (a commit's timer wakes it sooner). */
    runtimePollMs?: number
  } = {},
): Promise<TestApp> {
  const database = await createTestDatabase()
  const dataDir = mkdtempSync(join(tmpdir(), 'alts-test-'))
  const config = loadConfig({ DATABASE_URL: database.url, DATA_DIR: dataDir, LOG_LEVEL: 'silent', PORT: '0', ...env })
  const destination = logLines && { write: (line: string) => void logLines.push(line) }
  const services = await createServices(config, createLogger({ level: config.logLevel, ...(destination ? { destination } : {}) }), { runtimePollMs, withChain })
  await services.start()
  const server: Server = createHttpServer(createApp(services), { logger: services.logger }).listen(0, '127.0.0.1')
  if (wrapRequests) {
    const [listener] = server.listeners('request') as RequestListener[]
    server.removeAllListeners('request')
    server.on('request', wrapRequests(listener!))
  }
  await once(server, 'listening')
  const addr = server.address()
  const url = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`
  return {
    url,
    services,
    async account({ operator = false, name = 'test' } = {}) {
      const { account, apiKey } = await services.core.createAccount({ name, isOperator: operator })
      return { accountId: account.id, apiKey, api: apiClient(`${url}/api/v1`, apiKey) }
    },
    async close() {
      server.closeAllConnections()
      server.close()
      await services.close()
      await database.drop()
      rmSync(dataDir, { recursive: true, force: true })
    },
  }
}

/** Polls `GET /launch/:id` until the launch is `live` or `failed` (20 s at most); returns its body. */
export async function waitForLaunchEnd(api: Api, id: string): Promise<any> {
  const until = Date.now() + 20_000
  for (;;) {
    const res = await api('GET', `/launch/${id}`)
    if (res.body.status === 'live' || res.body.status === 'failed') return res.body
    if (Date.now() > until) throw new Error(`launch ${id} stuck in ${res.body.status}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

/** Writes raw bytes to the server at `baseUrl` and reads the whole answer (for what fetch cannot send). */
export function rawHttp(baseUrl: string, bytes: string): Promise<string> {
  const { hostname, port } = new URL(baseUrl)
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(bytes))
    let data = ''
    socket.on('data', (d) => (data += d))
    socket.on('error', reject)
    socket.on('close', () => resolve(data))
  })
}

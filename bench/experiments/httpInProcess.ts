/**
 * Diagnostic: the service's CPU per authenticated `GET /api/v1/agents/:id` (all cached: key,
 * agent row, actor) without sockets. The app is built in this process and each request is an
 * IncomingMessage handed to Koa's request handler, its response written to a socket that drops
 * what it gets; 10 requests in flight, as `npm run bench` has. What remains is the HTTP layer's
 * own JavaScript (middleware, routing, Koa, Node's response headers, the JSON), free of the
 * loopback and of the machine's other load that swing the `npm run bench` figures.
 * Quoted in docs/benchmarks.md ("request path: the HTTP layer").
 *
 *   node bench/experiments/httpInProcess.ts     (BENCH_PROBE_OPS=30000 per round, BENCH_ROUNDS=5)
 */
import { once } from 'node:events'
import { mkdtempSync, rmSync } from 'node:fs'
import { IncomingMessage, ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Duplex } from 'node:stream'
import { randomBytes } from 'node:crypto'
import { loadConfig } from '../../src/config.ts'
import { createLogger } from '../../src/logger.ts'
import { createServices } from '../../src/app/services.ts'
import { createApp } from '../../src/http/app.ts'
import { createDatabase, dropAllDatabases, median, round } from '../lib.ts'

const OPS = Number(process.env.BENCH_PROBE_OPS ?? 30_000)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)
const IN_FLIGHT = 10

/** A socket that takes every write and never delivers data. */
class NullSocket extends Duplex {
  override _read() {}
  override _write(_chunk: unknown, _encoding: unknown, done: () => void) {
    done()
  }
}

const dataDir = mkdtempSync(join(tmpdir(), 'bench-http-'))
try {
  const url = await createDatabase(`bench_http_${randomBytes(4).toString('hex')}`)
  const env = { DATABASE_URL: url, DATA_DIR: dataDir, LOG_LEVEL: 'warn', PORT: '0', WALLET_MASTER_KEY: randomBytes(32).toString('hex') }
  const config = loadConfig({ ...env, RATE_LIMIT_PER_KEY: '100000000', RATE_LIMIT_PER_IP: '100000000' })
  const services = await createServices(config, createLogger({ level: 'warn' }), {})
  await services.start()
  const app = createApp(services)
  const handle = app.callback()
  const { apiKey } = await services.core.createAccount({ name: 'bench' })
  const authorization = `Bearer ${apiKey}`

  // The agents are made over a real socket (a request body needs one); the reads need none.
  const server = app.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const ids: string[] = []
  for (let i = 0; i < IN_FLIGHT; i++) {
    const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1/agents`, {
      method: 'POST',
      headers: { authorization, 'content-type': 'application/json' },
      body: JSON.stringify({ name: `bench-${i}`, model: 'gpt-4o-mini', skills: ['trading'] }),
    })
    if (res.status !== 201) throw new Error(`create agent: HTTP ${res.status} ${await res.text()}`)
    ids.push(((await res.json()) as { id: string }).id)
  }
  server.close()

  /** One GET handed to Koa without a socket; resolves with the status once the response is sent. */
  const read = (id: string) =>
    new Promise<number>((resolve) => {
      const socket = new NullSocket()
      const req = new IncomingMessage(socket as never)
      Object.assign(req, { method: 'GET', url: `/api/v1/agents/${id}`, headers: { host: '127.0.0.1', authorization } })
      req.push(null)
      const res = new ServerResponse(req)
      res.assignSocket(socket as never)
      res.on('finish', () => resolve(res.statusCode))
      void handle(req, res)
    })
  const reads = async (n: number) => {
    for (let i = 0; i < n; i += IN_FLIGHT) {
      const statuses = await Promise.all(ids.map(read))
      if (statuses.some((s) => s !== 200)) throw new Error(`GET answered ${statuses.join(', ')}`)
    }
  }
  await reads(OPS) // warm-up
  const perOp: number[] = []
  for (let r = 0; r < ROUNDS; r++) {
    const before = process.cpuUsage()
    await reads(OPS)
    const cpu = process.cpuUsage(before)
    perOp.push((cpu.user + cpu.system) / OPS)
  }
  process.stdout.write(`CPU per GET, in process: median ${round(median(perOp), 1)} us, rounds ${perOp.map((x) => round(x, 1)).join(' / ')}\n`)
  await services.close()
} finally {
  await dropAllDatabases()
  rmSync(dataDir, { recursive: true, force: true })
}

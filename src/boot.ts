import cluster from 'node:cluster'
import { once } from 'node:events'
import type { Server, ServerResponse } from 'node:http'
import { flushCompileCache } from 'node:module'
import net from 'node:net'
import { loadConfig } from './config.ts'
import { createLogger } from './logger.ts'
import { createServices } from './app/services.ts'
import { createApp } from './http/app.ts'
import { createHttpServer } from './http/server.ts'
import { DatabaseInUseError } from './adapters/db/nodeLock.ts'
import { runPrimary } from './cluster.ts'

/**
 * Boot (from src/main.ts, once the compile cache is on): config -> infrastructure, stores,
 * runtime and core (createServices) -> HTTP. Stops everything it started (HTTP, runtime pollers,
 * database, embedded Postgres) on SIGINT/SIGTERM. With WORKERS above 1, this process is the
 * primary (src/cluster.ts) and each node process it forks boots here.
 */
async function main() {
  const config = loadConfig()
  const logger = createLogger({ level: config.logLevel })
  if (config.workers > 1 && cluster.isPrimary) return runPrimary(config, logger)
  const t0 = performance.now()
  const services = await createServices(config, logger)
  await services.start()
  const app = createApp(services)
  const server: Server = createHttpServer(app, { logger }).listen(config.port, config.host)
  await once(server, 'listening')
  const addr = server.address()
  const port = typeof addr === 'object' && addr ? addr.port : config.port
  // bootMs: from the configuration read to listening; startMs: from the process's start (Node's own start and the loading of the modules too).
  logger.info({ url: `http://${config.host}:${port}`, bootMs: Math.round(performance.now() - t0), startMs: Math.round(performance.now()) }, 'listening')
  // What this process compiled is on disk now, not only at a clean exit: a restart after a kill -9 finds it.
  flushCompileCache()

  const drain = drainOnStop(server)
  let stopping = false
  const shutdown = async (signal: string) => {
    if (stopping) return
    stopping = true
    logger.info({ signal }, 'shutting down')
    // Requests in flight finish (their writes are committed or not, and the client learns which);
    // then the shards are handed back and the node leaves.
    await drain(DRAIN_MS)
    await services.close().catch((err) => logger.error({ err }, 'shutdown error'))
    process.exit(0)
  }
  process.on('SIGINT', () => void shutdown('SIGINT'))
  process.on('SIGTERM', () => void shutdown('SIGTERM'))
  process.on('SIGHUP', () => void shutdown('SIGHUP'))
}

/** How long a stopping node waits for its requests in flight and its open connections. */
const DRAIN_MS = 10_000

/**
 * A polite stop of the HTTP server: it stops accepting connections (under `WORKERS=N`, the
 * primary sends new ones to the other nodes), every response from then on (those in flight too)
 * says `Connection: close`, and idle keep-alive connections are left to expire (Node's 5 s
 * keep-alive; a client that follows the `Keep-Alive: timeout` hint drops them first, so none is
 * closed under a request being sent). After `ms`, what is left is closed.
 */
function drainOnStop(server: Server): (ms: number) => Promise<void> {
  const open = new Set<ServerResponse>()
  let draining = false
  server.on('request', (_req, res: ServerResponse) => {
    if (draining) res.setHeader('Connection', 'close')
    open.add(res)
    res.once('close', () => open.delete(res))
  })
  return async (ms) => {
    draining = true
    for (const res of open) if (!res.headersSent) res.setHeader('Connection', 'close')
    // net.Server's close: http.Server's would also close the idle connections at once.
    const closed = new Promise((r) => net.Server.prototype.close.call(server, r))
    const timer = new Promise((r) => setTimeout(r, ms).unref())
    await Promise.race([closed, timer])
    server.closeIdleConnections()
    server.closeAllConnections()
  }
}

main().catch((err) => {
  // A refusal to boot is a message for the operator, not a stack trace.
  const text = err instanceof DatabaseInUseError ? err.message : err instanceof Error ? (err.stack ?? err.message) : String(err)
  process.stderr.write(`fatal: ${text}\n`)
  process.exit(1)
})

import cluster from 'node:cluster'
import { once } from 'node:events'
import type { Server } from 'node:http'
import { loadConfig } from './config.ts'
import { createLogger } from './logger.ts'
import { createServices } from './services.ts'
import { createApp } from './http/app.ts'
import { createHttpServer } from './http/server.ts'
import { DatabaseInUseError } from './db/nodeLock.ts'
import { runPrimary } from './cluster.ts'

/**
 * Boot: config -> infrastructure, stores, runtime and core (createServices) -> HTTP. Stops
 * everything it started (HTTP, runtime pollers, database, embedded Postgres) on SIGINT/SIGTERM.
 * With WORKERS above 1, this process is the primary (src/cluster.ts) and each node process it
 * forks boots here.
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
  logger.info({ url: `http://${config.host}:${port}`, bootMs: Math.round(performance.now() - t0) }, 'listening')

  let stopping = false
  const shutdown = async (signal: string) => {
    if (stopping) return
    stopping = true
    logger.info({ signal }, 'shutting down')
    // Let requests in flight finish (their writes are committed or not, and the client learns which).
    const closed = new Promise((r) => server.close(r))
    server.closeIdleConnections()
    await Promise.race([closed, new Promise((r) => setTimeout(r, 5000))])
    server.closeAllConnections()
    await services.close().catch((err) => logger.error({ err }, 'shutdown error'))
    process.exit(0)
  }
  process.on('SIGINT', () => void shutdown('SIGINT'))
  process.on('SIGTERM', () => void shutdown('SIGTERM'))
  process.on('SIGHUP', () => void shutdown('SIGHUP'))
}

main().catch((err) => {
  // A refusal to boot is a message for the operator, not a stack trace.
  const text = err instanceof DatabaseInUseError ? err.message : err instanceof Error ? (err.stack ?? err.message) : String(err)
  process.stderr.write(`fatal: ${text}\n`)
  process.exit(1)
})

import cluster, { type Worker } from 'node:cluster'
import { join } from 'node:path'
import type { Config } from './config.ts'
import type { Logger } from './logger.ts'
import { startEmbeddedPostgres, type EmbeddedPostgresHandle } from './dev/embeddedPostgres.ts'
import { acquireNodeLock, type NodeLock } from './adapters/db/nodeLock.ts'
import { openDatabase } from './adapters/db/orm.ts'
import type { ChainHandle } from './adapters/chain/chain.ts'
import { startEmbeddedChain } from './dev/embeddedChain.ts'
import { loadOrCreateMasterKey } from './adapters/chain/keystore.ts'

/**
 * `WORKERS=N npm start`: this process (the primary) owns what the nodes share on this machine
 * (the embedded Postgres and chain when no DATABASE_URL / CHAIN_RPC_URL is set, the migrations,
 * the wallet master key in DATA_DIR) and forks N node processes that serve the one HTTP port
 * (`node:cluster` hands connections round-robin). A node that dies is replaced; its shards move
 * to the others meanwhile. SIGTERM / SIGINT stops the nodes (each hands its shards back), then
 * the chain and Postgres. SIGUSR2 restarts the nodes one at a time (a rolling restart, e.g. after
 * a deploy): a new node starts and listens, then one old node stops politely; no request fails.
 */
export async function runPrimary(config: Config, logger: Logger): Promise<void> {
  let embedded: EmbeddedPostgresHandle | undefined
  let lock: NodeLock | undefined
  let chain: ChainHandle | undefined
  const url = config.databaseUrl ?? (embedded = await startEmbeddedPostgres({ dataDir: config.dataDir, logger, mode: 'own' })).url
  try {
    if (!config.databaseUrl || !config.chain.rpcUrl) lock = await acquireNodeLock(url, logger)
    // Before any node: one migration run, one master key.
    await (await openDatabase({ url, poolSize: 2, logger })).close()
    await loadOrCreateMasterKey({ dataDir: config.dataDir, configured: config.walletMasterKey, logger })
    if (!config.chain.rpcUrl) chain = await startEmbeddedChain({ dataDir: config.dataDir, logger })
  } catch (err) {
    await lock?.release()
    await embedded?.stop()
    throw err
  }
  const env: Record<string, string> = {
    DATABASE_URL: url,
    WORKERS: '1',
    ...(chain ? { CHAIN_RPC_URL: chain.rpcUrl.replace(/^http/, 'ws'), DEPLOYMENT_MANIFEST: join(config.dataDir, 'chain', 'manifest.json'), CHAIN_DEV: '1' } : {}),
  }
  let stopping = false
  const fork = (): Worker => cluster.fork(env)
  // A node that dies before it listens (a port in use, a bad setting) is restarted after 1, 2 s;
  // the third such death in a row stops the service instead of a restart loop.
  const listened = new Set<number>()
  let startFailures = 0
  cluster.on('listening', (worker) => {
    listened.add(worker.id)
    startFailures = 0
  })
  /** Nodes stopped on purpose by a rolling restart: not replaced when they exit. */
  const retiring = new Set<number>()
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) return
    if (retiring.delete(worker.id)) return void listened.delete(worker.id)
    if (!listened.delete(worker.id)) startFailures++
    if (startFailures >= 3) {
      logger.fatal({ pid: worker.process.pid, code, signal }, 'node processes die before they listen (3 in a row; the error is above); stopping')
      void shutdown('start failures', 1)
      return
    }
    const restartInMs = startFailures === 0 ? 0 : 1000 * 2 ** (startFailures - 1)
    logger.error({ pid: worker.process.pid, code, signal, restartInMs }, 'a node process died; starting another')
    setTimeout(fork, restartInMs)
  })
  for (let i = 0; i < config.workers; i++) fork()
  logger.info({ workers: config.workers, port: config.port }, 'primary started its node processes')

  const shutdown = async (signal: string, exitCode = 0) => {
    if (stopping) return
    stopping = true
    logger.info({ signal }, 'stopping the node processes')
    const workers = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined)
    await Promise.all(workers.map((w) => new Promise<void>((resolve) => {
      if (w.isDead()) return resolve()
      w.once('exit', () => resolve())
      w.process.kill('SIGTERM')
    })))
    await chain?.stop().catch((err: unknown) => logger.error({ err }, 'chain stop failed'))
    await lock?.release()
    await embedded?.stop().catch((err: unknown) => logger.error({ err }, 'postgres stop failed'))
    process.exit(exitCode)
  }
  process.on('SIGINT', () => void shutdown('SIGINT'))
  process.on('SIGTERM', () => void shutdown('SIGTERM'))
  process.on('SIGHUP', () => void shutdown('SIGHUP'))
  let rolling = false
  process.on('SIGUSR2', () => {
    if (rolling || stopping) return
    rolling = true
    void rollingRestart({ fork, retiring, logger, isStopping: () => stopping }).finally(() => (rolling = false))
  })
}

/**
 * Replaces the node processes one at a time: a new one is forked and listens (it has taken its
 * share of the shards), then one old one gets SIGTERM (it drains its requests, hands its shards
 * back and exits) before the next.
 */
async function rollingRestart({ fork, retiring, logger, isStopping }: { fork(): Worker; retiring: Set<number>; logger: Logger; isStopping(): boolean }) {
  const old = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined && !w.isDead())
  logger.info({ nodes: old.length }, 'rolling restart of the node processes')
  for (const worker of old) {
    if (isStopping()) return
    const fresh = fork()
    const started = await new Promise<boolean>((resolve) => {
      fresh.once('listening', () => resolve(true))
      fresh.once('exit', () => resolve(false))
    })
    if (!started) {
      logger.error({ pid: worker.process.pid }, 'a new node process died before it listened; the rolling restart stops here')
      return
    }
    retiring.add(worker.id)
    await new Promise<void>((resolve) => {
      if (worker.isDead()) return resolve()
      worker.once('exit', () => resolve())
      worker.process.kill('SIGTERM')
    })
  }
  logger.info({ nodes: old.length }, 'rolling restart done')
}

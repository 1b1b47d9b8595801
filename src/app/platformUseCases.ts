import type pg from 'pg'
import type { ActorRuntime } from '../actors/runtime/index.ts'
import { createActorJournalWatch } from '../actors/runtime/index.ts'
import type { ChainHandle } from '../adapters/chain/chain.ts'
import type { FaucetRequest } from '../dev/devFaucet.ts'
import { createIdempotencyKeys } from '../adapters/db/idempotency.store.ts'
import { pingDatabase, unconfirmedTxCount } from '../adapters/db/metrics.store.ts'
import { storageFigures } from '../adapters/db/opsOverview.store.ts'
import { NotFoundError } from '../domain/errors.ts'

export type HealthReport = {
  status: 'ok' | 'degraded'
  database: { ok: boolean; latencyMs: number | null }
  redis: { configured: boolean; ok: boolean | null }
  rpc: { configured: boolean; ok: boolean | null; chainId: number | null; latestBlock: string | null }
  venues: { configured: boolean; addresses: Record<string, string> | null }
}

/** What the front doors need besides the features, as services.ts built it. */
export type PlatformAdapters = {
  pool: pg.Pool
  runtime: ActorRuntime
  /** Absent when the service runs without a chain (some tests). */
  chain: ChainHandle | undefined
  /** Redis when REDIS_URL is set: only its PING is read here. */
  redis?: { ping(): Promise<string> } | undefined
  /** The dev faucet, only on the embedded chain. */
  faucet?: ((accountId: string, body: FaucetRequest) => Promise<object>) | undefined
}

/**
 * Part of the composition root (src/app/core.ts spreads it into `core`): what the HTTP app and MCP
 * reach besides the features: the health report, the idempotency keys, the actor event streams,
 * the metrics' counts and the dev faucet. With these, a front door needs nothing but `core`.
 *
 * @example
 * const platform = platformUseCases({ pool, runtime, chain, redis })
 * const report = await platform.health()
 */
export function platformUseCases(adapters: PlatformAdapters) {
  const { pool, runtime, chain, faucet } = adapters
  return {
    /** Whether a chain is configured: without one the swap and launch routes are absent (404). */
    chainConfigured: chain !== undefined,
    /** GET /health: the database (with its latency), Redis and the chain's RPC, and the venue addresses. */
    health: () => healthReport(adapters),
    /** The `Idempotency-Key` store (HTTP) and MCP's `idempotencyKey` claims. */
    idempotencyKeys: createIdempotencyKeys(pool, { nodeId: () => runtime.node().id }),
    /** The journal and commit watch the Server-Sent Events of actor-backed resources read. */
    actorEvents: createActorJournalWatch(pool, runtime),
    /** The Prometheus gauges' counts, read at scrape time so every node reports the same. */
    metricsCounts: {
      actors: () => runtime.inspect.scanActorCounts(),
      openEffects: () => runtime.inspect.openEffectCount(),
      unconfirmedTransactions: () => unconfirmedTxCount(pool),
      /** The database's size, its growth over the last hour, the retention's backlog (as the operator overview). */
      storage: async () => {
        const [figures, compactionBacklog] = await Promise.all([storageFigures(pool), runtime.retention.backlog()])
        return { ...figures, compactionBacklog }
      },
    },
    /** Whether the dev faucet is there (the embedded chain only). */
    faucetAvailable: faucet !== undefined,
    /** Funds an agent wallet or the account's deposit address; 404 when not on the embedded chain. */
    fundFromFaucet: async (accountId: string, body: FaucetRequest): Promise<object> => {
      if (!faucet) throw new NotFoundError('Route')
      return faucet(accountId, body)
    },
  }
}

async function healthReport({ pool, redis, chain }: PlatformAdapters): Promise<HealthReport> {
  const t0 = performance.now()
  const dbOk = await pingDatabase(pool)
  const latencyMs = dbOk ? Math.round((performance.now() - t0) * 10) / 10 : null
  const redisOk = redis ? await redis.ping().then((r) => r === 'PONG', () => false) : null
  const rpc = chain ? await rpcHealth(chain) : { configured: false, ok: null, chainId: null, latestBlock: null }
  const ok = dbOk && redisOk !== false && rpc.ok !== false
  return {
    status: ok ? 'ok' : 'degraded',
    database: { ok: dbOk, latencyMs },
    redis: { configured: !!redis, ok: redisOk },
    rpc,
    venues: chain ? { configured: true, addresses: venueAddresses(chain) } : { configured: false, addresses: null },
  }
}

/** Lower case, as every address the API returns. */
function venueAddresses({ manifest: { contracts: c } }: ChainHandle): Record<string, string> {
  return {
    'venue-a': c.venueA.toLowerCase(),
    'venue-b': c.venueB.toLowerCase(),
    router: c.router.toLowerCase(),
    factory: c.factory.toLowerCase(),
    weth: c.weth.toLowerCase(),
    usdc: c.usdc.toLowerCase(),
  }
}

async function rpcHealth(chain: ChainHandle): Promise<HealthReport['rpc']> {
  try {
    const block = await chain.publicClient.getBlockNumber()
    return { configured: true, ok: true, chainId: chain.chainId, latestBlock: block.toString() }
  } catch {
    return { configured: true, ok: false, chainId: chain.chainId, latestBlock: null }
  }
}

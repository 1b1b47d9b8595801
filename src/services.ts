import { Redis } from 'ioredis'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import type { Config } from './config.ts'
import type { Logger } from './logger.ts'
import { openDatabase, type Database } from './db/orm.ts'
import { startEmbeddedPostgres, type EmbeddedPostgresHandle } from './db/embeddedPostgres.ts'
import { acquireNodeLock } from './db/nodeLock.ts'
import { createActorRuntime } from './actors/actorRuntime.ts'
import { agentKind } from './actors/agent.machine.ts'
import { createAccountsService } from './domain/accounts/accounts.service.ts'
import { createSessionsService } from './domain/accounts/sessions.service.ts'
import { createAgentsService, type AgentWallet } from './domain/agents/agents.service.ts'
import type { ResolveVerifiedSymbol } from './domain/agents/resolvePolicyTokens.ts'
import { encryptPrivateKey, loadOrCreateMasterKey } from './chain/keystore.ts'
import { defaultModelOf, loadModelCatalog } from './llm/modelCatalog.ts'
import { createOpenAiProvider } from './llm/openAiProvider.ts'
import { createCreditsRepository } from './db/credits.repository.ts'
import { createAgentsRepository } from './db/agents.repository.ts'
import { withTransaction } from './db/transaction.ts'
import { createMemoryRateLimitStore, createRedisRateLimitStore } from './http/rateLimit.ts'
import type { AppDeps, HealthReport, WalletDeps } from './http/appDeps.ts'
import { startChain, type ChainHandle } from './chain/chain.ts'
import { createTxSender } from './chain/txSender.ts'
import { createLaunchEffects, simulateLaunch } from './chain/launchEffects.ts'
import { loadAgentAccount } from './chain/agentWallet.ts'
import { previewLaunch } from './chain/launchPreview.ts'
import { createDevFaucet } from './chain/devFaucet.ts'
import { launchKind, type LaunchInput } from './actors/launch.machine.ts'
import { walletOpKind } from './actors/walletOp.machine.ts'
import { transferPlanner } from './chain/transferPlanner.ts'
import { createSwapPlanner } from './chain/swapPlanner.ts'
import { createWalletOpEffects, reserveSpend, runWalletOp, spentTodayUsd, type WalletOpPlanner } from './chain/walletOps.ts'
import { createLaunchesService } from './domain/launches/launches.service.ts'
import { sweepIdempotencyKeys } from './http/middleware/idempotency.ts'
import { checkPolicy } from './domain/agents/policyCheck.ts'
import { isVerifiedSymbol, lookupToken, resolveToken, tokenUsd } from './chain/tokenInfo.ts'
import { createPriceReader } from './chain/priceReader.ts'
import { formatUsd } from './domain/tokens/priceMath.ts'
import { seedOf } from './chain/launchTx.ts'
import { claimPlanner } from './chain/claimPlanner.ts'
import { createIndexer, type Indexer } from './chain/indexer.ts'
import { createDepositServices } from './chain/depositServices.ts'
import { randomUUID } from 'node:crypto'
import { createCore } from './core.ts'

const KEY_REVOKED_CHANNEL = 'api-key-revoked'
const EMBEDDED_CHAIN_ID = 31337

export type Services = AppDeps & {
  /** Starts the background work: the actor runtime's pollers, then the chain indexer. */
  start(): Promise<void>
  db: Database
  redis: Redis | undefined
  indexer: Indexer | undefined
  close(): Promise<void>
}

/**
 * Opens the database (embedded Postgres when no DATABASE_URL), Redis when configured, and
 * builds every service the app and the admin CLI use.
 *
 * @example
 * const services = await createServices(loadConfig(), logger, { pgMode: 'own' })
 */
export async function createServices(
  config: Config,
  logger: Logger,
  {
    pgMode = 'own',
    runtimePollMs,
    withChain = true,
    sharedDatabase = false,
  }: {
    pgMode?: 'own' | 'attach'
    runtimePollMs?: number
    withChain?: boolean
    /** Several processes on this database on purpose (multi-node tests): no boot lock is taken. */
    sharedDatabase?: boolean
  } = {},
): Promise<Services> {
  // Read first: a bad catalog stops the boot before anything is started.
  const models = loadModelCatalog(config.modelsFile)
  let embedded: EmbeddedPostgresHandle | undefined
  const url = config.databaseUrl ?? (embedded = await startEmbeddedPostgres({ dataDir: config.dataDir, logger, mode: pgMode })).url
  // Before the migrations: a second process refuses at once instead of racing the first.
  const nodeLock = sharedDatabase ? undefined : await acquireNodeLock(url, logger).catch(async (err: unknown) => {
    await embedded?.stop()
    throw err
  })
  const db = await openDatabase({ url, poolSize: config.dbPoolSize, logger })

  let redis: Redis | undefined
  let subscriber: Redis | undefined
  if (config.redisUrl) {
    redis = new Redis(config.redisUrl, { maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: true })
    redis.on('error', (err) => logger.warn({ err: err.message }, 'redis error'))
    await redis.connect().catch((err) => logger.warn({ err: err.message }, 'redis not reachable at start'))
  }

  const masterKey = await loadOrCreateMasterKey({ dataDir: config.dataDir, configured: config.walletMasterKey, logger })
  let chain: ChainHandle | undefined
  if (withChain) {
    try {
      chain = await startChain({ dataDir: config.dataDir, rpcUrl: config.chain.rpcUrl, manifestPath: config.chain.manifestPath, logger })
    } catch (err) {
      await db.close()
      await nodeLock?.release()
      await embedded?.stop()
      throw err
    }
  }
  const { agentsRepository, credits } = createRepositories(db)
  const loadAccount = (agentId: string) => loadAgentAccount(db.pool, masterKey, agentId)
  const indexer = chain && createIndexer({ pool: db.pool, chain, logger, deposits: { confirmations: config.depositConfirmations, credits } })
  const deposits = chain ? createDepositServices({ pool: db.pool, chain, masterKey, confirmations: config.depositConfirmations }) : undefined
  const sender = chain
    ? createTxSender({
        pool: db.pool,
        chain,
        logger,
        confirmTimeoutMs: config.txConfirmTimeoutMs,
        awaitIndexed: indexer && ((block: bigint) => indexer.waitForBlock(block)),
        fault: config.faultInject
          ? (point) => {
              if (point === config.faultInject) {
                logger.warn({ point }, 'FAULT_INJECT: killing this process')
                process.kill(process.pid, 'SIGKILL')
              }
            }
          : undefined,
      })
    : undefined
  if (sender) {
    const n = await sender.rebroadcastPending()
    if (n > 0) logger.info({ transactions: n }, 're-broadcast stored transactions that were not confirmed')
  }
  /** Each kind of wallet operation (swap, transfer, claim) registers how it builds its transactions. */
  const planners: Record<string, WalletOpPlanner> = { transfer: transferPlanner, claim: claimPlanner, swap: createSwapPlanner() }
  const runtime = createActorRuntime({
    pool: db.pool,
    kinds: [agentKind, launchKind, walletOpKind],
    effectHandlers:
      chain && sender
        ? {
            ...createLaunchEffects({ pool: db.pool, chain, sender, loadAccount, logger }),
            ...createWalletOpEffects({ pool: db.pool, chain, sender, loadAccount, planners, logger }),
          }
        : {},
    logger,
    cacheSize: config.actorCacheSize,
    commitConcurrency: config.actorCommitConcurrency,
    // Holding the boot lock, this is the only runtime on the database.
    soleRuntime: !sharedDatabase,
    ...(runtimePollMs ? { pollMs: runtimePollMs } : {}),
  })
  // Idempotency keys are promised for 24 h and kept 48 h; older ones are swept hourly.
  const sweep = () => void sweepIdempotencyKeys(db.pool).catch((err) => logger.warn({ err: String(err) }, 'idempotency sweep failed'))
  sweep()
  const sweeper = setInterval(sweep, 3_600_000).unref()
  const accounts = createAccountsService({
    em: db.orm.em,
    keyCacheMs: config.apiKeyCacheMs,
    starterCredits: config.starterCredits,
    onKeyRevoked: (hash) => void redis?.publish(KEY_REVOKED_CHANNEL, hash).catch(() => {}),
  })
  if (config.redisUrl) {
    // Other nodes drop a deleted key from their caches at once.
    subscriber = new Redis(config.redisUrl, { lazyConnect: true })
    subscriber.on('error', () => {})
    subscriber.on('message', (_channel, hash: string) => accounts.forgetKey(hash))
    await subscriber.connect().then(() => subscriber?.subscribe(KEY_REVOKED_CHANNEL)).catch(() => {})
  }
  const sessions = createSessionsService({
    em: db.orm.em,
    accounts,
    chainId: chain?.chainId ?? EMBEDDED_CHAIN_ID,
    sessionTtlSeconds: config.sessionTtlSeconds,
    nonceTtlSeconds: config.siweNonceTtlSeconds,
  })
  const agents = createAgentsService({
    pool: db.pool,
    repository: agentsRepository,
    withTransaction: (fn) => withTransaction(db.pool, fn),
    runtime,
    tickMs: config.agentTickMs,
    whitelistHoldSeconds: config.whitelistHoldSeconds,
    resolveVerifiedSymbol: chain && verifiedSymbolResolver(db.pool, chain),
    createWallet: (agentId) => newAgentWallet(masterKey, agentId),
  })
  const rateLimitStore = redis ? createRedisRateLimitStore(redis) : createMemoryRateLimitStore()

  async function health(): Promise<HealthReport> {
    const t0 = performance.now()
    const dbOk = await db.pool.query('select 1').then(() => true, () => false)
    const latencyMs = dbOk ? Math.round((performance.now() - t0) * 10) / 10 : null
    const redisOk = redis ? await redis.ping().then((r) => r === 'PONG', () => false) : null
    const rpcOk = chain ? await chain.publicClient.getBlockNumber().then(() => true, () => false) : true
    const ok = dbOk && redisOk !== false && rpcOk
    return {
      status: ok ? 'ok' : 'degraded',
      database: { ok: dbOk, latencyMs },
      redis: { configured: !!redis, ok: redisOk },
      rpc: chain ? await rpcHealth(chain) : { configured: false, ok: null, chainId: null, latestBlock: null },
      venues: chain
        ? {
            configured: true,
            // Lower case, as every address the API returns.
            addresses: {
              'venue-a': chain.manifest.contracts.venueA.toLowerCase(),
              'venue-b': chain.manifest.contracts.venueB.toLowerCase(),
              router: chain.manifest.contracts.router.toLowerCase(),
              factory: chain.manifest.contracts.factory.toLowerCase(),
              weth: chain.manifest.contracts.weth.toLowerCase(),
              usdc: chain.manifest.contracts.usdc.toLowerCase(),
            },
          }
        : { configured: false, addresses: null },
    }
  }

  const launches = chain
    ? createLaunchesService({
        pool: db.pool,
        runtime,
        agents: agentsRepository,
        isVerifiedSymbol: (symbol) => isVerifiedSymbol({ pool: db.pool, chain }, symbol),
        quotes: { 'venue-a': chain.manifest.quotes['venue-a'] ?? [], 'venue-b': chain.manifest.quotes['venue-b'] ?? [], 'self-funded': ['ETH', 'USDC'] },
        precheck: async (input) => {
          const { usdValue, checkSpend } = await launchPolicy(input)
          await simulateLaunch({ chain }, input, await loadAccount(input.agentId))
          // A self-funded seed leaves the wallet: it is checked and recorded against the 24-hour
          // cap under the agent's lock, as a wallet operation is.
          if (input.venue === 'self-funded') {
            await reserveSpend(db.pool, { id: input.launchId, accountId: input.accountId, agentId: input.agentId, kind: 'launch', usdValue, checkSpend })
          }
        },
      })
    : undefined

  /**
   * The agent policy for a launch, as a launch and its preview both apply it: the kill switch,
   * the token lists for the quote asset, and for a self-funded launch the USD caps on its seed
   * (the other venues move nothing but gas). Checked once here for an early answer.
   */
  async function launchPolicy(input: LaunchInput) {
    const agent = await agentsRepository.findOwned(input.accountId, input.agentId)
    const quote = chain ? await resolveToken({ pool: db.pool, chain }, input.quote) : undefined
    const value = chain && quote && input.venue === 'self-funded'
      ? await tokenUsd(chain, await createPriceReader(chain), quote, seedOf(chain.manifest, input))
      : undefined
    const usdValue = value ? formatUsd(value.amountUsd18) : '0.00'
    const checkSpend = (spent: string) =>
      checkPolicy(agent?.policy, { tokens: [quote ?? { symbol: input.quote }], usdValue, spentTodayUsd: spent })
    checkSpend(await spentTodayUsd(db.pool, input.agentId))
    return { usdValue, checkSpend }
  }

  const wallet: WalletDeps | undefined = chain && sender && {
    chain, sender, planners, loadAccount,
    run: (input, opts) => runWalletOp({ pool: db.pool, runtime }, input, opts),
    spentTodayUsd: (agentId) => spentTodayUsd(db.pool, agentId),
  }
  return {
    config,
    logger,
    db,
    chain,
    launches,
    previewLaunch: chain && launches
      ? async (accountId, venue, body) => {
          const input = await launches.validate(accountId, venue, body, randomUUID())
          await launchPolicy(input)
          return previewLaunch(chain, input, await loadAccount(input.agentId))
        }
      : undefined,
    wallet,
    core: createCore({ pool: db.pool, runtime, wallet, agents: agentsRepository, credits, models }),
    faucet: chain?.embedded ? createDevFaucet({ agents: agentsRepository, chain, depositAddress: deposits!.address, confirmations: config.depositConfirmations }) : undefined,
    deposits,
    pool: db.pool,
    redis,
    indexer,
    accounts,
    sessions,
    agents,
    agentsRepository,
    runtime,
    models,
    defaultModel: defaultModelOf(models),
    modelProvider: createOpenAiProvider(config.modelProvider),
    credits,
    rateLimitStore,
    health,
    async start() {
      await runtime.start()
      indexer?.start()
    },
    async close() {
      clearInterval(sweeper)
      await indexer?.stop()
      await runtime.stop()
      if ('close' in rateLimitStore && typeof rateLimitStore.close === 'function') rateLimitStore.close()
      subscriber?.disconnect()
      redis?.disconnect()
      await db.close()
      await nodeLock?.release()
      await chain?.stop()
      await embedded?.stop()
    },
  }
}

/** A fresh custodial wallet for a new agent, its key encrypted bound to the agent id. */
function newAgentWallet(masterKey: Buffer, agentId: string): AgentWallet {
  const privateKey = generatePrivateKey()
  return { address: privateKeyToAccount(privateKey).address.toLowerCase(), encryptedKey: encryptPrivateKey({ masterKey, agentId, privateKey }) }
}

/** Resolves a policy token-list symbol to a verified token only. */
function verifiedSymbolResolver(pool: Database['pool'], chain: ChainHandle): ResolveVerifiedSymbol {
  return async (symbol) => {
    const r = await lookupToken({ pool, chain }, symbol, { verifiedSymbolsOnly: true })
    return 'token' in r ? { address: r.token.address } : r
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

/** The repositories over the database, built once and shared by the app, the effects and the indexer. */
function createRepositories(db: Database) {
  return { agentsRepository: createAgentsRepository({ pool: db.pool, em: db.orm.em }), credits: createCreditsRepository(db.pool) }
}

import { writeServiceSettings } from '../adapters/db/serviceSettings.store.ts'
import { Redis } from 'ioredis'
import type { LocalAccount } from 'viem'
import type { Config } from '../config.ts'
import type { Logger } from '../logger.ts'
import { openDatabase, type Database } from '../adapters/db/orm.ts'
import { startEmbeddedPostgres, type EmbeddedPostgresHandle } from '../dev/embeddedPostgres.ts'
import { acquireNodeLock } from '../adapters/db/nodeLock.ts'
import { createActorRuntime } from '../actors/runtime/index.ts'
import type { EffectHandler } from '../actors/runtime/index.ts'
import { agentKind } from '../actors/agent/agent.machine.ts'
import { HOOK_MESSAGE_KEY } from '../actors/automation/automationHooks.ts'
import { loadOrCreateMasterKey } from '../adapters/chain/keystore.ts'
import { defaultModelOf, loadModelCatalog } from '../adapters/llm/modelCatalog.ts'
import { createOpenAiProvider } from '../adapters/llm/openAiProvider.ts'
import { createCreditsRepository, startCreditFolder } from '../adapters/db/credits.repository.ts'
import type { CreditsRepository } from '../domain/billing/ports.ts'
import { createAgentsRepository } from '../adapters/db/agents.repository.ts'
import { createMemoryRateLimitStore, createRedisRateLimitStore } from '../http/rateLimit.ts'
import type { AppDeps } from '../http/appDeps.ts'
import type { WalletDeps } from '../adapters/chain/walletDeps.ts'
import type { ActorRuntime } from '../actors/runtime/index.ts'
import { connectChain, type ChainHandle } from '../adapters/chain/chain.ts'
import { startEmbeddedChain } from '../dev/embeddedChain.ts'
import { createTxSender, type TxSender } from '../adapters/chain/txSender.ts'
import { createLaunchEffects } from '../actors/launch/launch.effects.ts'
import { loadAgentAccount } from '../adapters/chain/agentWallet.ts'
import { createDevFaucet } from '../dev/devFaucet.ts'
import { launchKind } from '../actors/launch/launch.machine.ts'
import { walletOpKind } from '../actors/walletOp/walletOp.machine.ts'
import { transferPlanner } from '../adapters/chain/transferPlanner.ts'
import { createSwapPlanner } from '../adapters/chain/swapPlanner.ts'
import { createWalletOpEffects } from '../actors/walletOp/walletOp.effects.ts'
import type { WalletOpPlanner } from '../adapters/chain/walletOpPorts.ts'
import { createToolPort } from '../tools/toolPort.ts'
import type { ToolPort } from '../domain/toolCall.types.ts'
import { createPaperFiller } from '../adapters/chain/paperFills.ts'
import { createPaperLaunches } from '../adapters/chain/paperLaunch.ts'
import { createPaperStore } from '../adapters/db/paper.store.ts'
import { claimPlanner } from '../adapters/chain/claimPlanner.ts'
import { createIndexer, type Indexer } from '../adapters/chain/indexer.ts'
import { createDepositServices } from '../adapters/chain/depositServices.ts'
import { randomUUID } from 'node:crypto'
import { createWebhookDispatcher } from '../adapters/webhooks/dispatcher.ts'
import { startDatabaseSizeSampler } from '../adapters/db/databaseSize.store.ts'
import { webhookUseCases } from './webhookUseCases.ts'
import { renderEventsWith } from './webhookEvents.ts'
import { createCore, type Core, type IdentityAdapters } from './core.ts'
import { chatTurnKind } from '../actors/chatTurn/chatTurn.machine.ts'
import { createChatTurnEffects } from '../actors/chatTurn/chatTurn.effects.ts'
import { createRunEffects } from '../actors/run/run.effects.ts'
import { createAgentRunEffects } from '../actors/agent/agentRuns.effects.ts'
import { runKind } from '../actors/run/run.machine.ts'
import { automationKind } from '../actors/automation/automation.machine.ts'
import { createAutomationEffects } from '../actors/automation/automation.effects.ts'
import { createAgentAutomationsEffect, createAutomationTriggers } from '../actors/automation/automations.ts'
import { createAutomationsStore } from '../adapters/db/automations.store.ts'
import { MAX_PRICE_TOKENS } from '../domain/tokens/getPrice.ts'
import { createChatBus } from '../actors/conversation/chatBus.ts'
import { createNodeBus, type NodeBus } from '../actors/runtime/index.ts'
import { CHAT_MESSAGES_OF_TURN, createChatMessagesRepository } from '../adapters/db/chatMessages.repository.ts'
import type { AgentsRepository } from '../domain/agents/ports.ts'
import { apiRuntimeErrors } from './runtimeErrors.ts'
import { traceHooks } from './traceHooks.ts'
import { releaseUnstartedWrite } from '../adapters/db/walletOp.store.ts'
import type { Model } from '../adapters/llm/modelCatalog.ts'

const KEY_REVOKED_CHANNEL = 'api_key_revoked'
const EMBEDDED_CHAIN_ID = 31337

/**
 * The composition's handle: the app's dependencies (`core` and what the middleware needs), plus
 * what main.ts, the admin CLI and the tests hold on to (the database, the runtime, the chain).
 */
export type Services = AppDeps & {
  /** All of it (the app reads only its part). */
  config: Config
  /** Starts the background work: the actor runtime takes its shards (and the indexer, holding its role). */
  start(): Promise<void>
  db: Database
  pool: Database['pool']
  redis: Redis | undefined
  /** Absent when the service runs without a chain (some tests). */
  chain: ChainHandle | undefined
  wallet: WalletDeps | undefined
  indexer: Indexer | undefined
  runtime: ActorRuntime
  agentsRepository: AgentsRepository
  credits: CreditsRepository
  /** The catalog's one `default: true` entry. */
  defaultModel: Model
  close(): Promise<void>
}

/**
 * Builds the service top to bottom: infrastructure (the model catalog, the database, Redis, the
 * master key, the chain), stores (repositories, the indexer, the outbox), the actor runtime,
 * `core`, and what only `core` feeds (key revocations, automation triggers, the key sweep).
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
    remotePollMs,
    withChain = true,
    sharedDatabase = false,
  }: {
    pgMode?: 'own' | 'attach'
    runtimePollMs?: number
    /** While other nodes live, how often a waiter reads the row besides the bus's nudges (tests set it high to see the nudge alone). */
    remotePollMs?: number
    withChain?: boolean
    /** Several processes on this data directory on purpose (tests): no data directory lock is taken. */
    sharedDatabase?: boolean
  } = {},
): Promise<Services> {
  // Infrastructure. The catalog is read first: a bad catalog stops the boot before anything is started.
  const models = loadModelCatalog(config.modelsFile)
  // The process that runs an embedded Postgres or chain owns the data directory: a second one
  // there would stop them under it. Nodes that share a database and a chain join freely.
  const ownsEmbedded = !config.databaseUrl || (withChain && !config.chain.rpcUrl)
  const stores = await openStores(config, logger, { pgMode, dataDirLock: ownsEmbedded && !sharedDatabase, withChain })
  const { db, redis, nodes } = stores
  const masterKey = await loadOrCreateMasterKey({ dataDir: config.dataDir, configured: config.walletMasterKey, logger })
  // Stores: the repositories, then the chain's indexer, deposit addresses and outbox.
  const { agentsRepository, credits } = createRepositories(db)
  const loadAccount = (agentId: string) => loadAgentAccount(db.pool, masterKey, agentId)
  const { chain, indexer, deposits, sender } = await startChainParts(config, logger, { stores, credits, masterKey })
  const tools = createToolPort(() => core)
  const chat = createChatParts({ pool: db.pool, nodes, config, credits, agents: agentsRepository, models, core: () => core, tools })
  const automationStore = createAutomationsStore(db.pool)
  const rateLimitStore = redis ? createRedisRateLimitStore(redis) : createMemoryRateLimitStore()
  // Runtime: the effects that call `core` get it lazily (it is built next).
  const automationEffects = { ...createAutomationEffects({ core: () => core, tools, store: automationStore }), ...createAgentAutomationsEffect({ runtime: () => runtime, store: automationStore }) }
  const { runtime, planners } = createRuntime(config, logger, { db, nodes, chain, sender, indexer, loadAccount, runtimePollMs, remotePollMs, chatEffects: { ...chat.effects, ...automationEffects } })
  // Core: every use case, over the adapters above.
  const wallet: WalletDeps | undefined = chain && sender && { chain, sender, planners, loadAccount }
  const faucet = chain && config.chain.embedded ? createDevFaucet({ agents: agentsRepository, chain, depositAddress: deposits!.address, confirmations: config.depositConfirmations }) : undefined
  const core: Core = createCore({
    pool: db.pool, runtime, wallet, agents: agentsRepository, identity: identityOf(config, { db, nodes, chain, masterKey }), chat: chat.adapters,
    logger, credits, deposits: deposits?.ports, models, redis, faucet,
  })
  // What core feeds: revocations from other nodes, automations fired as blocks are indexed, the key sweep.
  nodes.subscribe(KEY_REVOKED_CHANNEL, (hash) => core.forgetApiKey(hash))
  if (indexer) indexer.onIndexed(createAutomationTriggers({ runtime, store: automationStore, prices: (mints) => pricesOf(core, mints), logger, chainId: chain!.chainId }).onIndexed)
  const sweeper = startIdempotencySweep(core, logger)
  const sizes = startDatabaseSizeSampler(db.pool, logger)
  const folder = startCreditFolder(db.pool, logger)
  // Account events out: the endpoints' use cases, and the dispatcher that fans events out and delivers them.
  const dispatcher = createWebhookDispatcher({ pool: db.pool, logger, settings: config.webhooks, render: renderEventsWith(core, logger) })
  const webhooks = webhookUseCases({ pool: db.pool, policy: config.webhooks.policy, wake: dispatcher.wake })
  return {
    config,
    logger,
    core,
    rateLimitStore,
    webhooks,
    db,
    pool: db.pool,
    redis,
    chain,
    wallet,
    indexer,
    runtime,
    agentsRepository,
    credits,
    defaultModel: defaultModelOf(models),
    /** The runtime takes its shards, and the indexer's role when no other node holds it (then it indexes). */
    async start() {
      // What the database's triggers read: the credits.low threshold.
      await writeServiceSettings(db.pool, { credits_low_threshold: config.creditsLowThreshold })
      await runtime.start()
      await dispatcher.start()
    },
    async close() {
      clearInterval(sweeper)
      sizes.stop()
      folder.stop()
      await dispatcher.stop()
      await indexer?.stop()
      await runtime.stop()
      if ('close' in rateLimitStore && typeof rateLimitStore.close === 'function') rateLimitStore.close()
      redis?.disconnect()
      await stores.close()
      await chain?.stop()
      await stores.stopEmbedded()
    },
  }
}

/**
 * The database (embedded Postgres when no DATABASE_URL), the data directory's lock, Redis when
 * configured, and the chain when wanted. Once the lock is held, the chain starts beside the
 * database's opening (its migrations, the node bus): an embedded anvil is a process of its own,
 * and a restart's stop of the anvil a killed predecessor left, and the new one's start, need
 * nothing of the database. That stop is for the data directory's owner only, hence after the
 * lock. When either fails, what the other opened is closed before the failure is thrown.
 * `close` releases the database and the lock; `stopEmbedded` stops an embedded Postgres last.
 */
async function openStores(config: Config, logger: Logger, { pgMode, dataDirLock, withChain }: { pgMode: 'own' | 'attach'; dataDirLock: boolean; withChain: boolean }) {
  let embedded: EmbeddedPostgresHandle | undefined
  const url = config.databaseUrl ?? (embedded = await startEmbeddedPostgres({ dataDir: config.dataDir, logger, mode: pgMode })).url
  // Before the migrations: a second owner of the data directory refuses at once.
  const nodeLock = dataDirLock
    ? await acquireNodeLock(url, logger).catch(async (err: unknown) => {
        await embedded?.stop()
        throw err
      })
    : undefined
  const [opened, started] = await Promise.allSettled([
    openDatabaseAndBus(config, logger, url),
    withChain ? (config.chain.rpcUrl ? connectChain({ rpcUrl: config.chain.rpcUrl, manifestPath: config.chain.manifestPath }) : startEmbeddedChain({ dataDir: config.dataDir, logger })) : undefined,
  ])
  if (opened.status === 'rejected' || started.status === 'rejected') {
    if (opened.status === 'fulfilled') await opened.value.close().catch(() => {})
    if (started.status === 'fulfilled') await started.value?.stop().catch(() => {})
    await nodeLock?.release()
    await embedded?.stop()
    throw opened.status === 'rejected' ? opened.reason : (started as PromiseRejectedResult).reason
  }
  const { db, nodes, redis } = opened.value
  return {
    db,
    redis,
    nodes,
    chain: started.value,
    async close() {
      await opened.value.close()
      await nodeLock?.release()
    },
    stopEmbedded: async () => embedded?.stop(),
  }
}
type Stores = Awaited<ReturnType<typeof openStores>>

/** The database (migrated), the node bus over it, and Redis when configured; `close` stops the bus and closes the database. */
async function openDatabaseAndBus(config: Config, logger: Logger, url: string) {
  const db = await openDatabase({ url, poolSize: config.dbPoolSize, logger, idleInTransactionMs: config.shardLeaseMs })
  // Nudges between nodes (commits, chat streams, key revocations) over the same database.
  const nodes = createNodeBus({ url, pool: db.pool, logger, newClient: db.newClient })
  await nodes.start()
  let redis: Redis | undefined
  if (config.redisUrl) {
    redis = new Redis(config.redisUrl, { maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: true })
    redis.on('error', (err) => logger.warn({ err: err.message }, 'redis error'))
    await redis.connect().catch((err) => logger.warn({ err: err.message }, 'redis not reachable at start'))
  }
  return {
    db,
    nodes,
    redis,
    async close() {
      await nodes.stop()
      await db.close()
    },
  }
}

/** The chain's indexer, the deposit address and the transaction sender (re-broadcasting what was pending), when there is a chain. */
async function startChainParts(config: Config, logger: Logger, { stores, credits, masterKey }: { stores: Stores; credits: CreditsRepository; masterKey: Buffer }) {
  const { db, chain } = stores
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
  return { chain, indexer, deposits, sender }
}

/** The actor runtime with the effect handlers of launches and wallet operations (swap, transfer, claim). */
function createRuntime(
  config: Config,
  logger: Logger,
  { db, nodes, chain, sender, indexer, loadAccount, runtimePollMs, remotePollMs, chatEffects }: {
    db: Database; nodes: NodeBus; chain: ChainHandle | undefined; sender: TxSender | undefined; indexer: Indexer | undefined; loadAccount(agentId: string): Promise<LocalAccount>
    runtimePollMs: number | undefined; remotePollMs: number | undefined; chatEffects: Record<string, EffectHandler>
  },
) {
  /** Each kind of wallet operation (swap, transfer, claim) registers how it builds its transactions. */
  const planners: Record<string, WalletOpPlanner> = { transfer: transferPlanner, claim: claimPlanner, swap: createSwapPlanner() }
  const runtime = createActorRuntime({
    pool: db.pool,
    // A wallet operation asked for by a step whose actor ended first gives its reservation back.
    kinds: [agentKind, launchKind, { ...walletOpKind, unstarted: releaseUnstartedWrite }, chatTurnKind, runKind, automationKind],
    effectHandlers: {
      ...chatEffects,
      ...(chain && sender ? { ...createLaunchEffects({ pool: db.pool, chain, sender, loadAccount, logger, paper: createPaperLaunches({ chain, store: createPaperStore(db.pool) }) }), ...createWalletOpEffects({ chain, sender, loadAccount, planners, logger, paper: createPaperFiller({ chain, store: createPaperStore(db.pool) }), lowEthWei: config.lowBalanceWei }) } : {}),
    },
    logger,
    errors: apiRuntimeErrors,
    trace: traceHooks,
    cacheSize: config.actorCacheSize,
    commitConcurrency: config.actorCommitConcurrency,
    shardLeaseMs: config.shardLeaseMs,
    retention: {
      windowsMs: { default: config.retention.actorMs, quiet: config.retention.quietMs },
      liveHistoryMs: config.retention.liveHistoryMs,
      inboxMs: config.retention.inboxMs,
      inboxByKeyPrefixMs: { [HOOK_MESSAGE_KEY]: config.retention.hookMessageMs },
      sweepMs: config.retention.sweepMs,
      // A run that started nothing leaves its row alone once compacted: its chat messages go too.
      ...(config.retention.keepQuietRunMessages ? {} : { quietRows: { [runKind.kind]: [CHAT_MESSAGES_OF_TURN] } }),
    },
    bus: nodes,
    // One node indexes the chain; the others read what it wrote.
    roles: indexer ? { indexer: { gained: () => indexer.start(), lost: () => indexer.stop() } } : {},
    ...(runtimePollMs ? { pollMs: runtimePollMs } : {}),
    ...(remotePollMs ? { remotePollMs } : {}),
  })
  return { runtime, planners }
}

/** USD prices of tokens at the latest block (null for a token without one). */
async function pricesOf(core: Core, mints: string[]): Promise<Map<string, string | null>> {
  const one = (tokens: string[]) => core.getPrice({ tokens, field: 'tokens' }).then((r) => r.prices.map((p) => p.priceUsd), () => undefined)
  const out = new Map<string, string | null>()
  for (let i = 0; i < mints.length; i += MAX_PRICE_TOKENS) {
    const chunk = mints.slice(i, i + MAX_PRICE_TOKENS)
    // All read at one block in one call; a token that no longer resolves fails the call, so then each on its own.
    const all = await one(chunk)
    const each = all ?? (await Promise.all(chunk.map(async (m) => (await one([m]))?.[0] ?? null)))
    chunk.forEach((m, k) => out.set(m, each[k] ?? null))
  }
  return out
}

/** Idempotency keys are promised for 24 h and kept 48 h; older ones are swept hourly. */
function startIdempotencySweep(core: Core, logger: Logger) {
  const sweep = () => void core.idempotencyKeys.sweep().catch((err) => logger.warn({ err: String(err) }, 'idempotency sweep failed'))
  sweep()
  return setInterval(sweep, 3_600_000).unref()
}

/** What the accounts, keys, sessions and agents use cases need: the ORM, their settings, the master key, key revocations. */
function identityOf(
  config: Config,
  { db, nodes, chain, masterKey }: { db: Database; nodes: NodeBus; chain: ChainHandle | undefined; masterKey: Buffer },
): IdentityAdapters {
  return {
    em: db.orm.em, config, masterKey, chainId: chain?.chainId ?? EMBEDDED_CHAIN_ID,
    publishKeyRevoked: (hash) => nodes.publish(KEY_REVOKED_CHANNEL, hash),
  }
}

/** The repositories over the database, built once and shared by the app, the effects and the indexer. */
function createRepositories(db: Database) {
  return { agentsRepository: createAgentsRepository({ pool: db.pool }), credits: createCreditsRepository(db.pool) }
}

/** Hosted chat's parts: the model provider, the messages, the live bus, and the chat turn's effects (which call `core`, built later). */
function createChatParts(p: { pool: Database['pool']; nodes: NodeBus; config: Config; credits: CreditsRepository; agents: AgentsRepository; models: Map<string, Model>; core(): Core; tools: ToolPort }) {
  const provider = createOpenAiProvider(p.config.modelProvider)
  const bus = createChatBus(p.nodes)
  const messages = createChatMessagesRepository(p.pool)
  const effects = createChatTurnEffects({
    provider, credits: p.credits, agents: p.agents, messages, models: p.models, bus, core: p.core, tools: p.tools,
    maxTokens: p.config.chat.maxTokens, historyLimit: p.config.chat.historyMessages,
  })
  const runEffects = createRunEffects({ provider, credits: p.credits, agents: p.agents, messages, models: p.models, bus, core: p.core, tools: p.tools, maxTokens: p.config.chat.maxTokens })
  return {
    effects: { ...effects, ...runEffects, ...createAgentRunEffects({ core: p.core }) },
    adapters: { models: p.models, defaultModel: defaultModelOf(p.models), provider, credits: p.credits, messages, bus, limits: p.config.chat, runs: p.config.runs },
  }
}

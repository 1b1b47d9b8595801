import { resolve } from 'node:path'
import { z } from 'zod'
import { parseEther } from 'viem'

const optionalString = z
  .string()
  .trim()
  .transform((v) => (v === '' ? undefined : v))
  .optional()

const bool = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((v) => v === 'true' || v === '1' || v === 'yes')

/** An empty variable counts as unset (`PORT=` must not mean port 0, nor a hold of 0 seconds). */
const unsetIfEmpty = (v: unknown) => (typeof v === 'string' && v.trim() === '' ? undefined : v)

const envSchema = z.preprocess((env) => Object.fromEntries(Object.entries(env as Record<string, unknown>).map(([k, v]) => [k, unsetIfEmpty(v)])), z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().default('127.0.0.1'),
  DATA_DIR: z.string().default('.data'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  DATABASE_URL: optionalString,
  DB_POOL_SIZE: z.coerce.number().int().min(2).max(200).default(20),
  REDIS_URL: optionalString,
  WALLET_MASTER_KEY: optionalString,
  WHITELIST_HOLD_SECONDS: z.coerce.number().int().min(0).optional(),
  CHAIN_RPC_URL: optionalString,
  DEPLOYMENT_MANIFEST: optionalString,
  /** Set by a WORKERS primary for its nodes: the chain at CHAIN_RPC_URL is this machine's development chain. */
  CHAIN_DEV: z.enum(['0', '1']).optional(),
  OPENAI_BASE_URL: optionalString,
  OPENAI_API_KEY: optionalString,
  /** Seconds before one model call attempt is abandoned (the SDK's default is 10 minutes). */
  OPENAI_TIMEOUT_SECONDS: z.coerce.number().min(1).max(3600).default(60),
  /** Retries inside the SDK (429/5xx/connection); the runtime owns retries, so 0 by default. */
  OPENAI_MAX_RETRIES: z.coerce.number().int().min(0).max(10).default(0),
  MODEL_CATALOG: optionalString,
  /** The earlier name of MODEL_CATALOG, still accepted. */
  MODELS_FILE: optionalString,
  /** Credits granted once to every new account (1 credit = 0.001 USD). */
  STARTER_CREDITS: z.coerce.number().int().min(0).max(1_000_000_000).default(1000),
  SIWE_DOMAIN: optionalString,
  SESSION_TTL_SECONDS: z.coerce.number().int().min(60).default(7 * 24 * 3600),
  SIWE_NONCE_TTL_SECONDS: z.coerce.number().int().min(10).default(300),
  COOKIE_SECURE: bool.default(false),
  TRUST_PROXY: bool.default(false),
  ACTOR_CACHE_SIZE: z.coerce.number().int().min(1).default(10_000),
  ACTOR_COMMIT_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(2),
  SHARD_LEASE_SECONDS: z.coerce.number().min(0.3).max(300).default(10),
  WORKERS: z.coerce.number().int().min(1).max(64).default(1),
  RATE_LIMIT_PER_KEY: z.coerce.number().int().min(1).default(1200),
  RATE_LIMIT_PER_IP: z.coerce.number().int().min(1).default(600),
  RATE_LIMIT_WINDOW_SECONDS: z.coerce.number().int().min(1).default(60),
  API_KEY_CACHE_SECONDS: z.coerce.number().min(0).default(2),
  /** Crash tests only: SIGKILL this process at a recovery point of the next transaction send. */
  FAULT_INJECT: z.enum(['before_sign', 'after_store', 'after_broadcast']).optional(),
  /** Admin CLI `deploy-contracts` only: the funded key that deploys the reference contracts. */
  DEPLOYER_PRIVATE_KEY: z.string().regex(/^0x[0-9a-fA-F]{64}$/, 'a 0x-prefixed 32-byte hex key').optional(),
  TX_CONFIRM_TIMEOUT_SECONDS: z.coerce.number().min(1).default(30),
  /** Blocks a deposit needs (its own included) before it is credited. */
  DEPOSIT_CONFIRMATIONS: z.coerce.number().int().min(1).max(1000).optional(),
  /** Model calls per chat turn at most; tool calls asked for in the last one are skipped. */
  CHAT_MAX_ROUNDS: z.coerce.number().int().min(1).max(20).default(5),
  /** Completion tokens per model call at most (what is reserved for the answer). */
  CHAT_MAX_TOKENS: z.coerce.number().int().min(16).max(100_000).default(1024),
  /** How long `POST /agents/:id/chat` waits for the turn before answering 202. */
  CHAT_WAIT_SECONDS: z.coerce.number().min(0.01).max(600).default(60),
  /** Earlier messages read for a turn's prompt at most (then bounded by the model's context window). */
  CHAT_HISTORY_MESSAGES: z.coerce.number().int().min(0).max(1000).default(50),
  /** The least `everySeconds` of an automation's interval trigger (tests and demos may set 1). */
  AUTOMATION_MIN_INTERVAL_SECONDS: z.coerce.number().int().min(1).max(86_400).default(60),
  /** Failed firings in a row after which an automation goes `error` (PATCH status armed re-arms it). */
  AUTOMATION_MAX_FAILURES: z.coerce.number().int().min(1).max(100).default(3),
  /** The least non-zero `run_interval_seconds` of an agent (tests and demos may set 1). */
  RUN_MIN_INTERVAL_SECONDS: z.coerce.number().int().min(1).max(86_400).default(60),
  /** A run's budgets when its request names none (ceilings: RUN_MAX_STEPS_CEILING, RUN_MAX_CREDITS_CEILING, RUN_MAX_SECONDS_CEILING). */
  RUN_DEFAULT_MAX_STEPS: z.coerce.number().int().min(1).max(1000).default(10),
  RUN_DEFAULT_MAX_CREDITS: z.coerce.number().int().min(1).default(500),
  RUN_DEFAULT_MAX_SECONDS: z.coerce.number().int().min(1).default(600),
  RUN_MAX_STEPS_CEILING: z.coerce.number().int().min(1).max(1000).default(50),
  RUN_MAX_CREDITS_CEILING: z.coerce.number().int().min(1).default(10_000),
  RUN_MAX_SECONDS_CEILING: z.coerce.number().int().min(1).default(3600),
  /** How long `POST /runs/:id/stop` waits for the run to end before answering it as it is. */
  RUN_STOP_WAIT_SECONDS: z.coerce.number().min(0.01).max(600).default(30),
  /** Webhook targets besides public addresses: none, loopback (the embedded chain's default) or all private networks (never the metadata address). */
  WEBHOOK_PRIVATE_TARGETS: z.enum(['none', 'loopback', 'all']).optional(),
  /** Plain-http webhook URLs (the embedded chain's default); else https only. */
  WEBHOOK_ALLOW_HTTP: bool.optional(),
  WEBHOOK_TIMEOUT_SECONDS: z.coerce.number().min(0.1).max(60).default(10),
  /** The first retry's delay; each next one doubles, up to WEBHOOK_RETRY_MAX_SECONDS, with jitter. */
  WEBHOOK_RETRY_BASE_SECONDS: z.coerce.number().min(0.001).max(3600).default(5),
  WEBHOOK_RETRY_MAX_SECONDS: z.coerce.number().min(0.001).max(86_400).default(3 * 3600),
  /** How long a delivery is retried before it is dead. */
  WEBHOOK_RETRY_WINDOW_SECONDS: z.coerce.number().min(0.001).default(24 * 3600),
  /** An endpoint failing this long is disabled. */
  WEBHOOK_DISABLE_AFTER_SECONDS: z.coerce.number().min(0.001).default(3 * 24 * 3600),
  WEBHOOK_POLL_MS: z.coerce.number().int().min(10).max(60_000).default(1000),
  /** How long account events (GET /events, Last-Event-ID) and their webhook deliveries are kept: at least 24 hours. */
  EVENT_RETENTION_HOURS: z.coerce.number().min(24).max(24 * 365).default(72),
  /** How long an ended actor that moved money (a swap, a launch, a run or chat turn that started one, an automation) keeps its full history before it is compacted. */
  ACTOR_RETENTION_MINUTES: z.coerce.number().gt(0).max(366 * 24 * 60).default(30 * 24 * 60),
  /** The same for a run or chat turn that started nothing (moved no money). */
  ACTOR_RETENTION_QUIET_MINUTES: z.coerce.number().gt(0).max(366 * 24 * 60).default(7 * 24 * 60),
  /** Keep a quiet run's chat messages (its goal, answers, tool results) when it is compacted; by default they go with its history. */
  KEEP_QUIET_RUN_MESSAGES: bool.optional(),
  /** How long a live actor (an agent, an automation) keeps its full history (journal entries and finished effects) before older ones make way for a checkpoint. */
  ACTOR_LIVE_HISTORY_HOURS: z.coerce.number().gt(0).max(366 * 24).default(24),
  /** How long an applied event of an actor's inbox (and its dedupe key) is kept. */
  INBOX_RETENTION_HOURS: z.coerce.number().gt(0).max(366 * 24).default(7 * 24),
  /** How long a signal hook's message id is kept (a message sent again within it answers duplicate: true). */
  HOOK_MESSAGE_RETENTION_HOURS: z.coerce.number().gt(0).max(366 * 24).default(30 * 24),
  /** How often each node compacts ended actors past their window and expires applied inbox events. */
  RETENTION_SWEEP_SECONDS: z.coerce.number().min(0.05).max(86_400).default(60),
  /** How often each node deletes the events past EVENT_RETENTION_HOURS (in batches of 1,000). */
  EVENT_RETENTION_SWEEP_SECONDS: z.coerce.number().min(0.05).max(86_400).default(600),
  /** `agent.low_balance`: a money move that leaves the agent's wallet less ETH than this (for gas). */
  LOW_BALANCE_ETH: z.string().regex(/^\d{1,6}(\.\d{1,18})?$/, 'A decimal ETH amount such as 0.005.').default('0.005'),
  /** `credits.low`: the account's credit balance falls below this many credits (1,000 credits = 1 USD). */
  CREDITS_LOW_THRESHOLD: z.coerce.number().int().min(0).max(1_000_000_000).default(200),
  /** OpenTelemetry's standard variables (docs/operations.md, Traces): tracing is on when one of the first four is set. */
  OTEL_EXPORTER_OTLP_ENDPOINT: z.url({ protocol: /^https?$/ }).optional(),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: z.url({ protocol: /^https?$/ }).optional(),
  OTEL_EXPORTER_OTLP_PROTOCOL: z.enum(['http/json', 'http/protobuf']).optional(),
  OTEL_SERVICE_NAME: optionalString,
  OTEL_EXPORTER_OTLP_HEADERS: z.string().regex(/^[^=,]+=[^,]*(,[^=,]+=[^,]*)*$/, 'comma-separated key=value pairs').optional(),
  OTEL_SDK_DISABLED: bool.optional(),
}))

export type Config = ReturnType<typeof loadConfig>

/**
 * Parses the environment once at boot. Nothing else in the service reads process.env.
 *
 * @example
 * const config = loadConfig(process.env)
 */
export function loadConfig(env: Record<string, string | undefined> = process.env) {
  const parsed = envSchema.safeParse(env)
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')
    throw new Error(`Invalid configuration: ${problems}`)
  }
  const e = parsed.data
  const dataDir = resolve(e.DATA_DIR)
  const embeddedChain = e.CHAIN_RPC_URL === undefined || e.CHAIN_DEV === '1'
  return {
    port: e.PORT,
    host: e.HOST,
    dataDir,
    logLevel: e.LOG_LEVEL,
    databaseUrl: e.DATABASE_URL,
    dbPoolSize: e.DB_POOL_SIZE,
    redisUrl: e.REDIS_URL,
    walletMasterKey: e.WALLET_MASTER_KEY,
    chain: { rpcUrl: e.CHAIN_RPC_URL, manifestPath: e.DEPLOYMENT_MANIFEST, embedded: embeddedChain },
    /** 24 h in production, 0 on the embedded dev chain, unless set. */
    whitelistHoldSeconds: e.WHITELIST_HOLD_SECONDS ?? (embeddedChain ? 0 : 86_400),
    modelProvider: {
      baseUrl: e.OPENAI_BASE_URL,
      apiKey: e.OPENAI_API_KEY,
      timeoutMs: Math.round(e.OPENAI_TIMEOUT_SECONDS * 1000),
      maxRetries: e.OPENAI_MAX_RETRIES,
    },
    /** MODEL_CATALOG, else the older MODELS_FILE; undefined = the built-in catalog. */
    modelsFile: e.MODEL_CATALOG ?? e.MODELS_FILE,
    starterCredits: e.STARTER_CREDITS,
    siweDomain: e.SIWE_DOMAIN,
    sessionTtlSeconds: e.SESSION_TTL_SECONDS,
    siweNonceTtlSeconds: e.SIWE_NONCE_TTL_SECONDS,
    cookieSecure: e.COOKIE_SECURE,
    trustProxy: e.TRUST_PROXY,
    actorCacheSize: e.ACTOR_CACHE_SIZE,
    actorCommitConcurrency: e.ACTOR_COMMIT_CONCURRENCY,
    /** How long a node's shard leases and heartbeat last without a renewal: a dead node's work moves within it. */
    shardLeaseMs: Math.round(e.SHARD_LEASE_SECONDS * 1000),
    /** Node processes `npm start` runs on this machine (one primary owns the embedded Postgres and chain). */
    workers: e.WORKERS,
    rateLimit: {
      perKey: e.RATE_LIMIT_PER_KEY,
      perIp: e.RATE_LIMIT_PER_IP,
      windowSeconds: e.RATE_LIMIT_WINDOW_SECONDS,
    },
    apiKeyCacheMs: Math.round(e.API_KEY_CACHE_SECONDS * 1000),
    faultInject: e.FAULT_INJECT,
    deployerPrivateKey: e.DEPLOYER_PRIVATE_KEY as `0x${string}` | undefined,
    txConfirmTimeoutMs: e.TX_CONFIRM_TIMEOUT_SECONDS * 1000,
    /** 2 on the embedded chain (blocks come only with transactions), 12 elsewhere, unless set. */
    depositConfirmations: e.DEPOSIT_CONFIRMATIONS ?? (embeddedChain ? 2 : 12),
    chat: { maxRounds: e.CHAT_MAX_ROUNDS, maxTokens: e.CHAT_MAX_TOKENS, waitMs: Math.round(e.CHAT_WAIT_SECONDS * 1000), historyMessages: e.CHAT_HISTORY_MESSAGES },
    runMinIntervalSeconds: e.RUN_MIN_INTERVAL_SECONDS,
    automations: { minIntervalSeconds: e.AUTOMATION_MIN_INTERVAL_SECONDS, maxFailures: e.AUTOMATION_MAX_FAILURES },
    runs: {
      defaults: { maxSteps: e.RUN_DEFAULT_MAX_STEPS, maxCredits: e.RUN_DEFAULT_MAX_CREDITS, maxSeconds: e.RUN_DEFAULT_MAX_SECONDS },
      ceilings: {
        maxSteps: Math.max(e.RUN_MAX_STEPS_CEILING, e.RUN_DEFAULT_MAX_STEPS),
        maxCredits: Math.max(e.RUN_MAX_CREDITS_CEILING, e.RUN_DEFAULT_MAX_CREDITS),
        maxSeconds: Math.max(e.RUN_MAX_SECONDS_CEILING, e.RUN_DEFAULT_MAX_SECONDS),
      },
      stopWaitMs: Math.round(e.RUN_STOP_WAIT_SECONDS * 1000),
    },
    /** Thresholds of the owner's warnings (docs/operations.md): `agent.low_balance` in wei, `credits.low` in credits. */
    lowBalanceWei: parseEther(e.LOW_BALANCE_ETH),
    creditsLowThreshold: e.CREDITS_LOW_THRESHOLD,
    /** Retention of the runtime's history (docs/operations.md, Retention). */
    retention: {
      actorMs: Math.round(e.ACTOR_RETENTION_MINUTES * 60_000),
      quietMs: Math.round(e.ACTOR_RETENTION_QUIET_MINUTES * 60_000),
      liveHistoryMs: Math.round(e.ACTOR_LIVE_HISTORY_HOURS * 3_600_000),
      inboxMs: Math.round(e.INBOX_RETENTION_HOURS * 3_600_000),
      hookMessageMs: Math.round(e.HOOK_MESSAGE_RETENTION_HOURS * 3_600_000),
      sweepMs: Math.round(e.RETENTION_SWEEP_SECONDS * 1000),
      keepQuietRunMessages: e.KEEP_QUIET_RUN_MESSAGES ?? false,
    },
    webhooks: {
      policy: { privateTargets: e.WEBHOOK_PRIVATE_TARGETS ?? (embeddedChain ? 'loopback' : 'none'), allowHttp: e.WEBHOOK_ALLOW_HTTP ?? embeddedChain },
      timeoutMs: Math.round(e.WEBHOOK_TIMEOUT_SECONDS * 1000),
      retryBaseMs: Math.round(e.WEBHOOK_RETRY_BASE_SECONDS * 1000),
      maxDelayMs: Math.round(e.WEBHOOK_RETRY_MAX_SECONDS * 1000),
      retryWindowMs: Math.round(e.WEBHOOK_RETRY_WINDOW_SECONDS * 1000),
      disableAfterMs: Math.round(e.WEBHOOK_DISABLE_AFTER_SECONDS * 1000),
      pollMs: e.WEBHOOK_POLL_MS,
      retentionHours: e.EVENT_RETENTION_HOURS,
      retentionSweepMs: Math.round(e.EVENT_RETENTION_SWEEP_SECONDS * 1000),
      concurrency: 32,
      perEndpoint: 4,
    },
    /** Traces to an OTLP/HTTP collector, or undefined: off (docs/operations.md, Traces). */
    tracing: tracingOf(e),
  }
}

/**
 * OTEL_* as the OpenTelemetry specification reads them: the traces' URL is
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as given, else OTEL_EXPORTER_OTLP_ENDPOINT + `/v1/traces`
 * (default `http://localhost:4318`); the protocol defaults to `http/protobuf`.
 */
function tracingOf(e: z.infer<typeof envSchema>) {
  const set = [e.OTEL_EXPORTER_OTLP_ENDPOINT, e.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, e.OTEL_EXPORTER_OTLP_PROTOCOL, e.OTEL_SERVICE_NAME].some((v) => v !== undefined)
  if (!set || e.OTEL_SDK_DISABLED === true) return undefined
  const base = (e.OTEL_EXPORTER_OTLP_ENDPOINT ?? 'http://localhost:4318').replace(/\/+$/, '')
  const headers = Object.fromEntries((e.OTEL_EXPORTER_OTLP_HEADERS ?? '').split(',').filter(Boolean).map((kv) => {
    const i = kv.indexOf('=')
    return [decodeURIComponent(kv.slice(0, i).trim()), decodeURIComponent(kv.slice(i + 1).trim())]
  }))
  return {
    url: e.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? `${base}/v1/traces`,
    protocol: e.OTEL_EXPORTER_OTLP_PROTOCOL ?? ('http/protobuf' as const),
    serviceName: e.OTEL_SERVICE_NAME ?? 'agent-launch-trading-service',
    headers,
  }
}

export type TracingConfig = NonNullable<Config['tracing']>

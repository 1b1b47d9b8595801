import type pg from 'pg'
import type { Config } from '../config.ts'
import type { Logger } from '../logger.ts'
import type { AgentsRepository } from '../domain/agents/ports.ts'
import type { ActorRuntime } from '../actors/actorRuntime.ts'
import type { Model } from '../llm/modelCatalog.ts'
import type { RateLimitStore } from './rateLimit.ts'
import type { ChainHandle } from '../chain/chain.ts'
import type { WalletDeps } from '../chain/walletDeps.ts'
import type { ModelProvider } from '../domain/chat/ports.ts'
import type { CreditsRepository } from '../domain/billing/ports.ts'
import type { Core } from '../core.ts'
import type { FaucetRequest } from '../chain/devFaucet.ts'

export type HealthReport = {
  status: 'ok' | 'degraded'
  database: { ok: boolean; latencyMs: number | null }
  redis: { configured: boolean; ok: boolean | null }
  rpc: { configured: boolean; ok: boolean | null; chainId: number | null; latestBlock: string | null }
  venues: { configured: boolean; addresses: Record<string, string> | null }
}

/** Everything the HTTP app needs, built by the caller (main.ts, or a test with its own database). */
export type AppDeps = {
  /** The use cases (src/core.ts): routes parse, call one, and shape its answer. */
  core: Core
  config: Config
  logger: Logger
  pool: pg.Pool
  /** The agent aggregate's storage: every read of an agent of an account goes through it. */
  agentsRepository: AgentsRepository
  runtime: ActorRuntime
  models: Map<string, Model>
  /** The catalog's one `default: true` entry (new agents and chats that name no model). */
  defaultModel: Model
  /** The provider behind OPENAI_BASE_URL / OPENAI_API_KEY (`configured: false` without them). */
  modelProvider: ModelProvider
  /** The credit ledger. */
  credits: CreditsRepository
  rateLimitStore: RateLimitStore
  health(): Promise<HealthReport>
  /** Absent when the service runs without a chain (some tests). */
  chain?: ChainHandle | undefined
  wallet?: WalletDeps | undefined
  /** Only on the embedded chain. */
  faucet?(accountId: string, body: FaucetRequest): Promise<object>
}

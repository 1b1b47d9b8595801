import type pg from 'pg'
import type { EntityManager } from '@mikro-orm/postgresql'
import type { ActorRuntime } from '../actors/runtime/index.ts'
import type { WalletDeps } from '../adapters/chain/walletDeps.ts'
import type { AgentsRepository } from '../domain/agents/ports.ts'
import type { ChatMessagesRepository, ChatModel, ModelProvider } from '../domain/chat/ports.ts'
import type { CreditsRepository } from '../domain/billing/ports.ts'
import type { RunLimits } from '../domain/runs/run.schema.ts'
import type { ChatBus } from '../actors/conversation/chatBus.ts'
import type { GetDepositInfoDeps } from '../domain/billing/getDepositInfo.ts'
import type { Model } from '../adapters/llm/modelCatalog.ts'
import type { Config } from '../config.ts'
import type { Logger } from '../logger.ts'
import type { PlatformAdapters } from './platformUseCases.ts'

/** What src/app/services.ts has built: the database, the actor runtime, the chain's wallet operations. */
export type CoreAdapters = {
  pool: pg.Pool
  runtime: ActorRuntime
  agents: AgentsRepository
  /** Absent without a chain: the use cases that need one refuse with 503 `chain_unavailable`. */
  wallet: WalletDeps | undefined
  chat: ChatAdapters
  /** Accounts, keys, sessions and agents: the ORM their repositories work over, and their settings. */
  identity: IdentityAdapters
  logger: Logger
  /** The credit ledger, and the deposit addresses where credits are bought on chain (absent without a chain). */
  credits: CreditsRepository
  deposits?: GetDepositInfoDeps | undefined
  /** The model catalog (src/adapters/llm/models.json or MODEL_CATALOG). */
  models: ReadonlyMap<string, Model>
} & Pick<PlatformAdapters, 'redis' | 'faucet'>

export type IdentityAdapters = {
  em: EntityManager
  config: Pick<Config, 'apiKeyCacheMs' | 'starterCredits' | 'sessionTtlSeconds' | 'siweNonceTtlSeconds' | 'whitelistHoldSeconds' | 'automations'> &
    Partial<Pick<Config, 'runMinIntervalSeconds'>>
  /** The wallet master key: a new agent's wallet key is encrypted with it. */
  masterKey: Buffer
  /** The chain id a sign-in message must name. */
  chainId: number
  /** Tells the other nodes a key was revoked (Redis pub/sub), so they drop it from their caches. */
  publishKeyRevoked?: ((hash: string) => void) | undefined
}

/** What chat is built from: the catalog, the provider, the ledger, the messages and the live bus. */
export type ChatAdapters = {
  models: ReadonlyMap<string, ChatModel>
  defaultModel: ChatModel
  provider: ModelProvider
  credits: CreditsRepository
  messages: ChatMessagesRepository
  bus: ChatBus
  limits: { maxRounds: number; maxTokens: number; waitMs: number }
  /** Runs' budgets (defaults, ceilings) and how long a stop waits for the run to end. */
  runs: RunLimits & { stopWaitMs: number }
}

/** How long platform-wide answers (stats, the leaderboard ranking) are shared by every caller. */
export const PLATFORM_FIGURES_TTL_MS = 2000

import type { PolicyTarget } from '../policies/ports.ts'
import type { OwnerPolicyView } from '../policies/ownerPolicies.ts'
import type { Queryable, RuntimeAdmin, RuntimeInspection } from '../../actors/runtime/index.ts'
import type { AuditActor, AuditPage } from '../agents/auditTrail.ts'
import type { CreditsRepository } from '../billing/ports.ts'
import type { AgentView } from '../agents/agentView.ts'
import type { AgentRef } from '../agents/getAgent.ts'
import type { UpdateAgentInput } from '../agents/updateAgent.ts'
import type { stopRun } from '../runs/stopRun.ts'
import type { getPortfolio, GetPortfolioInput } from '../wallet/getPortfolio.ts'
import type { GetPortfolioHistoryInput, PortfolioPoint } from '../wallet/getPortfolioHistory.ts'

export type { ActorListQuery, ActorSummary, TimelinePage } from '../../actors/runtime/index.ts'

/** The runtime's inspection and administration API (`runtime.inspect`, `runtime.admin`, src/actors/runtime/inspect.ts): what the console reads and acts on. */
export type OpsRuntime = {
  inspect: RuntimeInspection
  admin: RuntimeAdmin
  /** The retention's backlog: ended actors past their window not compacted yet. */
  retention: { backlog(): Promise<number> }
}

/** The operator behind a console action, as the audit trail records it. */
export type OpsOperator = { accountId: string; via: 'key' | 'session'; keyId: string | null; address: string | null }

export type OpsAuditEntry = {
  /** The account that owns the subject (so its own trail shows what an operator did to it). */
  accountId: string
  subjectId: string
  action: string
  operator: OpsOperator
  reason: string
  before?: unknown
  after?: unknown
}

/** A transaction the outbox holds for an actor's effect, replacements named (the console's relations). */
export type EffectTransaction = {
  id: string; kind: string; nonce: number; hash: string; status: string; replacedBy: string | null; replacedByHash: string | null
  blockNumber: number | null; gasUsed: string | null; effectiveGasPrice: string | null; feeWei: string | null
  maxFeePerGas: string; maxPriorityFeePerGas: string; from: string; to: string | null; error: string | null; createdAt: string; updatedAt: string
}

export type AuditQuery = { accountId?: string | undefined; subjectId?: string | undefined; limit: number; cursor?: string | undefined }

/** A wallet operation or launch of an agent as the console lists it (src/domain/ops/agentOperations.ts). */
export type AgentOperation = {
  id: string
  /** `swap`, `transfer`, `claim` (a wallet operation's planner), or `launch`. */
  kind: string
  actorKind: string
  status: string
  usdValue: string | null
  txHash: string | null
  amounts: { in: OperationAmount | null; out: OperationAmount | null }
  params: Record<string, unknown>
  result: Record<string, unknown> | null
  error: { code: string; message: string } | null
  /** The chat turn, run or automation that started it; null for a request of the owner's. */
  startedBy: { id: string; kind: string | null; status: string | null } | null
  createdAt: string
  updatedAt: string
}
export type OperationAmount = { amount: string; symbol: string | null; token: string | null }

/** Where a page of an agent's operations ends: the last row's creation (Postgres' own text, to the microsecond) and id. */
export type OperationsCursor = { createdAt: string; id: string }

/** The overview's figures that are the service's, not the runtime's. */
export type ServiceFigures = {
  transactions: { lastMinute: number; lastHour: number }
  /** Credits charged for model calls in the last hour (1 credit = 0.001 USD). */
  modelCreditsLastHour: number
  /** Credits held by reservations of calls in flight, over every account. */
  creditsReserved: number
  /** The indexer's last block (null before its first pass). */
  indexedBlock: number | null
  /** The database's size in bytes (`pg_database_size`). */
  databaseBytes: number
  /** Its growth since the sample of an hour ago (null until the service has sampled it an hour ago). */
  growthLastHourBytes: number | null
}

/** The service's own records the console reads and writes (src/adapters/db: ops*.store.ts, auditTrail.store.ts, walletOp.store.ts). */
export type OpsStore = {
  /** The effects whose transactions carry this hash (request and effect ids). */
  effectIdsOfTx(hash: string): Promise<string[]>
  /** The agents whose wallet is this address (lower-case). */
  agentIdsOfWallet(address: string): Promise<string[]>
  /** The transactions these effects sent, replacements included, the first 100 by nonce. */
  transactionsOf(effectIds: string[]): Promise<EffectTransaction[]>
  /** The USD value and the recorded parent (the chat turn, run or automation that started it) of wallet operations and launches, by id. */
  walletOpFacts(ids: string[]): Promise<Map<string, { usdValue: string | null; parentId: string | null }>>
  serviceFigures(): Promise<ServiceFigures>
  /** The block of the agent's first transaction in the outbox (null before any). */
  firstAgentTxBlock(agentId: string): Promise<bigint | null>
  spentTodayUsd(agentId: string): Promise<string>
  listAudit(q: AuditQuery): Promise<AuditPage>
  /** Writes one operator action to the audit trail, in `db` (a transaction) or on its own. */
  writeAudit(e: OpsAuditEntry, db?: Queryable): Promise<void>
  /** Marks a launched token verified or not and journals it; undefined when no token has that address. */
  setTokenVerified(p: { address: string; verified: boolean; accountId: string; actor: AuditActor }): Promise<{ address: string; symbol: string; verified: boolean } | undefined>
}

/** The chain as the console reads it: its head and a block's time; absent without a chain. */
export type OpsChain = {
  /** The head, or null when it does not answer within `timeoutMs`. */
  head(timeoutMs: number): Promise<number | null>
  /** The head now, uncached. */
  headNow(): Promise<bigint>
  /** A block's time, ISO 8601. */
  blockTime(number: bigint): Promise<string>
}

/** The same use cases as the account's own routes: the console acts as the owner would, under the same rules. */
export type OpsFeatures = {
  getAgent(input: AgentRef): Promise<AgentView>
  updateAgent(input: UpdateAgentInput): Promise<AgentView>
  stopRun(input: { accountId: string; runId: string }): ReturnType<typeof stopRun>
  getPortfolio(input: GetPortfolioInput): ReturnType<typeof getPortfolio>
  getPortfolioHistory(input: GetPortfolioHistoryInput): Promise<PortfolioPoint[]>
  /** The account's or an agent's owner policy as it applies now, with a held loosening. */
  getOwnerPolicy(target: PolicyTarget): Promise<OwnerPolicyView>
}

/** Every port of the operator's use cases; each use case's deps are a `Pick` of them. */
export type OpsPorts = {
  runtime: OpsRuntime
  store: OpsStore
  chain: OpsChain | undefined
  credits: Pick<CreditsRepository, 'balance'>
  features: OpsFeatures
}

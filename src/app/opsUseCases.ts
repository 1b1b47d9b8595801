import type pg from 'pg'
import type { ActorRuntime } from '../runtime/actorRuntime.ts'
import type { ChainHandle } from '../adapters/chain/chain.ts'
import type { OpsChain, OpsFeatures, OpsPorts, OpsStore } from '../domain/ops/ports.ts'
import { getActorTimeline, getOpsActor, listNodes, listOpsActors, opsActorStream, type GetActorTimelineInput, type ListOpsActorsInput } from '../domain/ops/inspectActors.ts'
import { getOpsOverview } from '../domain/ops/opsOverview.ts'
import { getAgentValueHistory, getOpsAgent } from '../domain/ops/opsAgent.ts'
import { listAgentOperations, type ListAgentOperationsInput } from '../domain/ops/agentOperations.ts'
import { cancelRun, pauseAgent, resolveDeadLetter, setTokenVerified, unstickActor, type ResolveDeadLetterInput } from '../domain/ops/opsActions.ts'
import type { OpsOperator } from '../domain/ops/ports.ts'
import type { AuditActor } from '../domain/agents/auditTrail.ts'
import { listAudit } from '../adapters/db/auditTrail.store.ts'
import { listNodes as nodeRows } from '../runtime/shardLease.store.ts'
import { agentIdsOfWallet, effectIdsOfTx, firstAgentTxBlock, transactionsOf } from '../adapters/db/opsActors.store.ts'
import { setTokenVerified as storeTokenVerified, writeOpsAudit } from '../adapters/db/opsActions.store.ts'
import { walletOpFacts } from '../adapters/db/opsAgentActivity.store.ts'
import { serviceFigures } from '../adapters/db/opsOverview.store.ts'
import { spentTodayUsd } from '../adapters/db/walletOp.store.ts'

/** What the ops use cases are built from: the stores' pool, the runtime, the chain, and the feature use cases they act through. */
export type OpsDeps = {
  pool: pg.Pool
  runtime: ActorRuntime
  chain: ChainHandle | undefined
  credits: OpsPorts['credits']
  features: OpsFeatures
}

/** The service's stores as the ops port (src/domain/ops/ports.ts). */
function opsStore(pool: pg.Pool): OpsStore {
  return {
    effectIdsOfTx: (hash) => effectIdsOfTx(pool, hash),
    agentIdsOfWallet: (address) => agentIdsOfWallet(pool, address),
    transactionsOf: (ids) => transactionsOf(pool, ids),
    walletOpFacts: (ids) => walletOpFacts(pool, ids),
    serviceFigures: () => serviceFigures(pool),
    firstAgentTxBlock: (agentId) => firstAgentTxBlock(pool, agentId),
    spentTodayUsd: (agentId) => spentTodayUsd(pool, agentId),
    listAudit: (q) => listAudit(pool, q),
    writeAudit: (e, db) => writeOpsAudit(db ?? pool, e),
    setTokenVerified: (p) => storeTokenVerified(pool, p),
  }
}

/** The chain client as the ops port: the head within a timeout, a block's time. */
function opsChain(chain: ChainHandle): OpsChain {
  const client = chain.publicClient
  return {
    head(timeoutMs) {
      const timeout = new Promise<null>((r) => setTimeout(() => r(null), timeoutMs).unref())
      return Promise.race([client.getBlockNumber().then(Number, () => null), timeout])
    },
    headNow: () => client.getBlockNumber({ cacheTime: 0 }),
    blockTime: async (blockNumber) => new Date(Number((await client.getBlock({ blockNumber })).timestamp) * 1000).toISOString(),
  }
}

/**
 * The operator's use cases (GET/POST /api/v1/ops/..., the console), wired: src/domain/ops/ over
 * the runtime's inspection and administration API, the service's stores and the chain.
 * src/app/core.ts spreads them into `core`.
 *
 * @example
 * const ops = opsUseCases({ pool, runtime, chain, credits, features: core })
 * const card = await ops.getOpsAgent({ agentId })
 */
export function opsUseCases({ pool, runtime, chain, credits, features }: OpsDeps) {
  const ports: OpsPorts = {
    runtime: { inspect: runtime.inspect, admin: runtime.admin, nodes: () => nodeRows(pool) },
    store: opsStore(pool),
    chain: chain && opsChain(chain),
    credits,
    features,
  }
  return {
    listActors: (filter: ListOpsActorsInput) => listOpsActors(ports, filter),
    countActors: () => runtime.inspect.actorCounts(),
    listNodes: () => listNodes(ports),
    getOpsActor: (input: { actorId: string }) => getOpsActor(ports, input),
    setTokenVerified: (input: { address: string; verified: boolean; accountId: string; actor: AuditActor }) => setTokenVerified(ports, input),
    listAudit: (q: Parameters<OpsStore['listAudit']>[0]) => ports.store.listAudit(q),
    getOpsOverview: () => getOpsOverview(ports),
    getActorTimeline: (input: GetActorTimelineInput) => getActorTimeline(ports, input),
    opsActorStream: (input: { actorId: string }) => opsActorStream(ports, input),
    getOpsAgent: (input: { agentId: string }) => getOpsAgent(ports, input),
    listAgentOperations: (input: ListAgentOperationsInput) => listAgentOperations(ports, input),
    listDeadLetters: (input: { limit: number }) => runtime.inspect.openDeadLetters(input.limit),
    getAgentValueHistory: (input: { agentId: string }) => getAgentValueHistory(ports, input),
    resolveDeadLetter: (input: ResolveDeadLetterInput) => resolveDeadLetter(ports, input),
    unstickActor: (input: { actorId: string; operator: OpsOperator; reason: string }) => unstickActor(ports, input),
    pauseAgent: (input: { agentId: string; actor: AuditActor; operator: OpsOperator; reason: string }) => pauseAgent(ports, input),
    cancelRun: (input: { runId: string; operator: OpsOperator; reason: string }) => cancelRun(ports, input),
  }
}

import type pg from 'pg'
import type { ActorRuntime } from '../actors/runtime/index.ts'
import type { ChainHandle } from '../adapters/chain/chain.ts'
import type { OpsFeatures, OpsPorts, OpsStore } from '../domain/ops/ports.ts'
import { opsChain } from '../adapters/chain/opsChain.ts'
import { createOpsStore } from '../adapters/db/opsStore.ts'
import { getActorTimeline, getOpsActor, listNodes, listOpsActors, opsActorStream, type GetActorTimelineInput, type ListOpsActorsInput } from '../domain/ops/inspectActors.ts'
import { getOpsOverview } from '../domain/ops/opsOverview.ts'
import { getAgentValueHistory, getOpsAgent } from '../domain/ops/opsAgent.ts'
import { listAgentOperations, type ListAgentOperationsInput } from '../domain/ops/agentOperations.ts'
import { cancelRun, pauseAgent, resolveDeadLetter, setTokenVerified, unstickActor, type ResolveDeadLetterInput } from '../domain/ops/opsActions.ts'
import type { OpsOperator } from '../domain/ops/ports.ts'
import type { AuditActor } from '../domain/agents/auditTrail.ts'

/** What the ops use cases are built from: the stores' pool, the runtime, the chain, and the feature use cases they act through. */
export type OpsDeps = {
  pool: pg.Pool
  runtime: ActorRuntime
  chain: ChainHandle | undefined
  credits: OpsPorts['credits']
  features: OpsFeatures
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
    runtime: { inspect: runtime.inspect, admin: runtime.admin, retention: runtime.retention },
    store: createOpsStore(pool),
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

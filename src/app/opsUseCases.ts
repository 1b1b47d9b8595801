import type pg from 'pg'
import type { ActorRuntime } from '../runtime/actorRuntime.ts'
import type { ChainHandle } from '../adapters/chain/chain.ts'
import type { CreditsRepository } from '../domain/billing/ports.ts'
import { InvalidStateError, NotFoundError, ServiceError } from '../domain/errors.ts'
import { agentFlags } from '../domain/agents/agentFlags.ts'
import type { AuditActor } from '../domain/agents/auditTrail.ts'
import type { AgentView } from '../domain/agents/agentView.ts'
import type { AgentRef } from '../domain/agents/getAgent.ts'
import type { UpdateAgentInput } from '../domain/agents/updateAgent.ts'
import type { stopRun } from '../domain/runs/stopRun.ts'
import type { getPortfolio, GetPortfolioInput } from '../domain/wallet/getPortfolio.ts'
import type { GetPortfolioHistoryInput, PortfolioPoint } from '../domain/wallet/getPortfolioHistory.ts'
import { listAudit } from '../adapters/db/auditTrail.store.ts'
import { actorCounts, opsOverviewCounts } from '../adapters/db/opsOverview.store.ts'
import { listNodes } from '../runtime/shardLease.store.ts'
import { actorDetail, actorRelations, eventTypeOf, actorSummary, actorsOfAgent, findActorRow, firstAgentTxBlock, listActors, listOpenDeadLetters, type ActorListFilter } from '../adapters/db/opsActors.store.ts'
import { actorOwner, clearStuck, openDeadLetter, resolveDeadLetter, setTokenVerified, writeOpsAudit, type OpsOperator } from '../adapters/db/opsActions.store.ts'
import { timelinePage } from '../adapters/db/opsTimeline.store.ts'
import { actorsNamingAgent, agentOperations, type OperationsCursor } from '../adapters/db/opsAgentActivity.store.ts'
import { spentTodayUsd } from '../adapters/db/walletOp.store.ts'

/** How long the overview waits for the chain head before answering without it. */
const CHAIN_HEAD_TIMEOUT_MS = 500
/** Points of an agent's value chart. */
const HISTORY_POINTS = 16

/** What the ops use cases need: the stores' pool, the runtime, the chain, and the feature use cases they act through. */
export type OpsDeps = {
  pool: pg.Pool
  runtime: ActorRuntime
  chain: ChainHandle | undefined
  credits: Pick<CreditsRepository, 'balance'>
  /** The same use cases as the account's own routes: the console acts as the owner would, under the same rules. */
  features: {
    getAgent(input: AgentRef): Promise<AgentView>
    updateAgent(input: UpdateAgentInput): Promise<AgentView>
    stopRun(input: { accountId: string; runId: string }): ReturnType<typeof stopRun>
    getPortfolio(input: GetPortfolioInput): ReturnType<typeof getPortfolio>
    getPortfolioHistory(input: GetPortfolioHistoryInput): Promise<PortfolioPoint[]>
  }
}

/** At most `n` distinct blocks evenly spaced from `from` to `to`, both included. */
export function sampleBlocks(from: bigint, to: bigint, n: number): bigint[] {
  if (to <= from) return [to]
  const span = to - from
  const steps = BigInt(Math.max(1, n - 1))
  return [...new Set(Array.from({ length: n }, (_, i) => from + (span * BigInt(i)) / steps))].filter((b) => b <= to)
}

/**
 * The operator's use cases (GET/POST /api/v1/ops/..., the console): every actor across accounts,
 * the audit trail, token verification, the overview, one agent's card, dead letters and the
 * audited actions. Part of the composition root: src/app/core.ts spreads them into `core`.
 *
 * @example
 * const ops = opsUseCases({ pool, runtime, chain, credits, features: core })
 * const card = await ops.getOpsAgent({ agentId })
 */
export function opsUseCases(deps: OpsDeps) {
  const { pool } = deps
  return {
    /** Actors of every account, ids ascending; one more than `limit` when a next page exists. `failed`: in a failure state of their kind. */
    listActors: (filter: ActorListFilter) => listActors(pool, filter, failureStatesOf(deps.runtime)),
    countActors: () => actorCounts(pool),
    /** The service's node processes with the shards and roles each holds (`leaseExpiresAt`: when its heartbeat runs out). */
    listNodes: async () => (await listNodes(pool)).map(({ expiresAt, ...n }) => ({ ...n, leaseExpiresAt: expiresAt })),
    getOpsActor: (input: { actorId: string }) => opsActor(pool, input.actorId),
    /** Operators vouch for a launched token (swaps then need no acknowledgement for it); 404 for an unknown address. */
    setTokenVerified: async (input: { address: string; verified: boolean; accountId: string; actor: AuditActor }) =>
      (await setTokenVerified(pool, input)) ?? notFound('Token'),
    listAudit: (q: Parameters<typeof listAudit>[1]) => listAudit(pool, q),
    getOpsOverview: () => opsOverview(deps),
    /** One page of an actor's timeline (`before`: the journal seq the page before ended at), with its relations and each effect kind's attempt limit. */
    getActorTimeline: (input: { actorId: string; before?: number | undefined; limit: number }) => actorTimeline(deps, input),
    /** What the console's live stream of one actor reads: its kind, its summary, and its final states. */
    opsActorStream: (input: { actorId: string }) => opsActorStream(deps, input.actorId),
    getOpsAgent: (input: { agentId: string }) => opsAgent(deps, input.agentId),
    /** An agent's wallet operations and launches, newest first, each with what started it; `next` where the next page starts. 404 for an unknown agent. */
    listAgentOperations: async (input: { agentId: string; limit: number; before?: OperationsCursor | undefined }) => {
      ;(await actorOwner(pool, input.agentId, 'agent')) ?? notFound('Agent')
      return agentOperations(pool, input.agentId, input)
    },
    listDeadLetters: (input: { limit: number }) => listOpenDeadLetters(pool, input.limit),
    getAgentValueHistory: (input: { agentId: string }) => agentValueHistory(deps, input.agentId),
    resolveDeadLetter: (input: { seq: number; resolution: 'retried' | 'discarded'; operator: OpsOperator; reason: string }) => resolveDead(deps, input),
    unstickActor: (input: { actorId: string; operator: OpsOperator; reason: string }) => unstick(pool, input),
    pauseAgent: (input: { agentId: string; actor: AuditActor; operator: OpsOperator; reason: string }) => pauseAgent(deps, input),
    cancelRun: (input: { runId: string; operator: OpsOperator; reason: string }) => cancelRun(deps, input),
  }
}

/** Each kind's failure states (ActorKind.failureStates), the one list "failed only" reads. */
export function failureStatesOf(runtime: Pick<ActorRuntime, 'kinds'>): Record<string, readonly string[]> {
  return Object.fromEntries([...runtime.kinds.values()].map((k) => [k.kind, k.failureStates ?? []]))
}

const notFound = (what: string): never => {
  throw new NotFoundError(what)
}

/** One actor in full: its row, its snapshot, its live timers and its detail (effects, journal, dead letters). */
async function opsActor(pool: pg.Pool, actorId: string) {
  const actor = (await findActorRow(pool, actorId)) ?? notFound('Actor')
  return {
    ...actorSummary(actor),
    machineVersion: actor.machine_version,
    stateValue: actor.state_value,
    snapshot: actor.snapshot,
    liveTimers: actor.timers,
    ...(await actorDetail(pool, actor.id)),
  }
}

async function chainHead(chain: ChainHandle | undefined): Promise<number | null> {
  if (!chain) return null
  const timeout = new Promise<null>((r) => setTimeout(() => r(null), CHAIN_HEAD_TIMEOUT_MS).unref())
  const head = chain.publicClient.getBlockNumber().then(Number, () => null)
  return Promise.race([head, timeout])
}

/** The counts, and how far the indexer is behind the chain's head (null without a chain or when it does not answer in time). */
async function opsOverview({ pool, chain }: OpsDeps) {
  const [counts, head] = await Promise.all([opsOverviewCounts(pool), chainHead(chain)])
  const lag = head !== null && counts.indexedBlock !== null ? Math.max(0, head - counts.indexedBlock) : null
  return { ...counts, chain: { head, indexedBlock: counts.indexedBlock, lagBlocks: lag }, at: new Date().toISOString() }
}

/**
 * One actor with its parent, children, transactions and latest dead letters (an agent: also the
 * latest 100 actors that name it, `namingAgent`), and one page of its
 * timeline (the route lays it out); `maxAttemptsOf` tells how many attempts an effect kind gets
 * (null: it never gives up).
 */
async function actorTimeline({ pool, runtime }: OpsDeps, input: { actorId: string; before?: number | undefined; limit: number }) {
  const actor = (await findActorRow(pool, input.actorId)) ?? notFound('Actor')
  const [page, relations, named] = await Promise.all([
    timelinePage(pool, actor.id, { before: input.before, limit: input.limit }),
    actorRelations(pool, actor.id, actor.parent_id),
    actor.kind === 'agent' ? actorsNamingAgent(pool, actor.id) : [],
  ])
  const persistent = new Set([...runtime.kinds.values()].flatMap((k) => k.persistentEffects ?? []))
  const maxAttemptsOf = (effectKind: string) => (persistent.has(effectKind) ? null : runtime.maxEffectAttempts)
  return { actor: { ...actorSummary(actor), stateValue: actor.state_value, snapshot: actor.snapshot }, relations: { ...relations, namingAgent: named }, page, maxAttemptsOf }
}

async function opsActorStream({ pool, runtime }: OpsDeps, actorId: string) {
  const row = await findActorRow(pool, actorId)
  const kind = row && runtime.kinds.get(row.kind)
  if (!row || !kind) return notFound('Actor')
  const read = async () => actorSummary((await findActorRow(pool, actorId)) ?? notFound('Actor'))
  // A status is final when it names one of the machine's final states.
  const isFinal = (s: string) => (kind.machine.root.states[s] as { type?: string } | undefined)?.type === 'final'
  return { kind: row.kind, read, isFinal }
}

/** One agent's card: the agent, its owner, spend, credits, portfolio, runs, chat turns, automations, audit and flags. */
async function opsAgent({ pool, chain, credits: ledger, features }: OpsDeps, agentId: string) {
  const { accountId } = (await actorOwner(pool, agentId, 'agent')) ?? notFound('Agent')
  const [agent, spent, credits, runs, chatTurns, automations, audit, portfolio] = await Promise.all([
    features.getAgent({ accountId, agentId }),
    spentTodayUsd(pool, agentId),
    ledger.balance(accountId),
    actorsOfAgent(pool, 'run', agentId),
    actorsOfAgent(pool, 'chatturn', agentId),
    actorsOfAgent(pool, 'automation', agentId),
    listAudit(pool, { subjectId: agentId, limit: 20 }),
    chain ? features.getPortfolio({ accountId, agentId }).catch(() => null) : Promise.resolve(null),
  ])
  return {
    agent, accountId, spentTodayUsd: spent, credits, portfolio, runs, chatTurns, automations, audit: audit.entries,
    flags: agentFlags({ portfolio, credits }),
  }
}

/** An agent's portfolio value over time: valued on chain at blocks from its first transaction to now (no points without a chain). */
async function agentValueHistory({ pool, chain, features }: OpsDeps, agentId: string) {
  const owner = (await actorOwner(pool, agentId, 'agent')) ?? notFound('Agent')
  const client = chain?.publicClient
  if (!client) return []
  const head = await client.getBlockNumber({ cacheTime: 0 })
  const first = await firstAgentTxBlock(pool, agentId)
  const from = first === null ? head : first > 0n ? first - 1n : 0n
  const blocks = await Promise.all(
    sampleBlocks(from, head, HISTORY_POINTS).map(async (number) => ({
      number,
      at: new Date(Number((await client.getBlock({ blockNumber: number })).timestamp) * 1000).toISOString(),
    })),
  )
  return features.getPortfolioHistory({ accountId: owner.accountId, agentId, blocks })
}

/**
 * Retries or discards a dead letter. A retry of an event its actor's kind lists as unsafe to
 * replay (it would start a fund-moving effect whose policy check ran at the request) is refused:
 * 409 `retry_moves_funds`, nothing written; discard it, and let the owner ask again.
 */
async function resolveDead({ pool, runtime }: OpsDeps, input: { seq: number; resolution: 'retried' | 'discarded'; operator: OpsOperator; reason: string }) {
  if (input.resolution === 'retried') {
    const open = (await openDeadLetter(pool, input.seq)) ?? notFound('Dead letter')
    const type = eventTypeOf(open.event)
    if (type !== null && runtime.kinds.get(open.kind)?.unsafeToReplay?.includes(type)) {
      throw new ServiceError(
        `A retry of ${type} would start a ${open.kind} that moves funds under the policy checked when it was requested, not today's; discard it instead, and have the owner ask again.`,
        { code: 'retry_moves_funds', status: 409 },
      )
    }
  }
  const done = (await resolveDeadLetter(pool, input)) ?? notFound('Dead letter')
  // The event was enqueued again in that transaction; this processes it now (the dedupe key inserts nothing twice).
  if (done.dedupeKey) await runtime.enqueue(done.actorId, done.accountId, done.event as { type: string }, done.dedupeKey)
  return { seq: done.seq, actorId: done.actorId, resolution: done.resolution }
}

/** Clears a stuck mark: 404 for an unknown actor, 409 for one that is not stuck. */
async function unstick(pool: pg.Pool, input: { actorId: string; operator: OpsOperator; reason: string }) {
  const done = await clearStuck(pool, input)
  if (!done) {
    if (!(await actorOwner(pool, input.actorId))) notFound('Actor')
    throw new InvalidStateError({ event: 'unstick', state: 'not stuck' })
  }
  return { actorId: input.actorId, stuck: false, stuckReason: done.stuckReason }
}

/** The kill switch: the agent's policy `paused`, through the same use case as PATCH /agents/:id (tightening: at once), audited with the reason. */
async function pauseAgent({ pool, features }: OpsDeps, { agentId, actor, operator, reason }: { agentId: string; actor: AuditActor; operator: OpsOperator; reason: string }) {
  const { accountId } = (await actorOwner(pool, agentId, 'agent')) ?? notFound('Agent')
  const before = await features.getAgent({ accountId, agentId })
  const agent = await features.updateAgent({ accountId, agentId, actor, policy: { paused: true } })
  await writeOpsAudit(pool, {
    accountId, subjectId: agentId, action: 'ops.agent.pause', operator, reason,
    before: { paused: before.policy.paused }, after: { paused: agent.policy.paused },
  })
  return agent
}

/** Cancels a run through the stop use case (nothing new starts, what is in flight completes), audited with the reason. */
async function cancelRun({ pool, features }: OpsDeps, { runId, operator, reason }: { runId: string; operator: OpsOperator; reason: string }) {
  const owner = (await actorOwner(pool, runId, 'run')) ?? notFound('Run')
  const run = await features.stopRun({ accountId: owner.accountId, runId })
  await writeOpsAudit(pool, {
    accountId: owner.accountId, subjectId: runId, action: 'ops.run.cancel', operator, reason,
    before: { status: owner.status }, after: { status: run.status },
  })
  return run
}

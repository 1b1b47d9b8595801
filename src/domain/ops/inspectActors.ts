import { NotFoundError } from '../errors.ts'
import type { ActorListQuery, ActorSummary, OpsPorts } from './ports.ts'

const notFound = (what: string): never => {
  throw new NotFoundError(what)
}

export type ListOpsActorsDeps = Pick<OpsPorts, 'runtime' | 'store'>
export type ListOpsActorsInput = Omit<ActorListQuery, 'namedBy' | 'match'> & {
  /** The agent itself and every actor whose context names it (launches, operations, turns, runs). */
  agentId?: string | undefined
  /** An actor id, a transaction hash (the actor whose effect sent it) or an address (an agent's wallet, a launched token). */
  q?: string | undefined
}

/**
 * Actors of every account, ids ascending; one more than `limit` when a next page exists.
 * `failed`: in a failure state of their kind. A search term is an actor id, a transaction hash
 * (the outbox names its effects) or an address (an agent's wallet, a launch's token).
 *
 * @example
 * const actors = await listOpsActors(deps, { q: '0xabc...', limit: 50 })
 */
export async function listOpsActors({ runtime, store }: ListOpsActorsDeps, { agentId, q, ...filter }: ListOpsActorsInput): Promise<ActorSummary[]> {
  const term = q?.trim().toLowerCase() ?? ''
  const match = !q ? undefined
    : /^0x[0-9a-f]{64}$/.test(term) ? { effectIds: await store.effectIdsOfTx(term) }
    : /^0x[0-9a-f]{40}$/.test(term) ? { ids: await store.agentIdsOfWallet(term), context: { kind: 'launch', key: 'tokenAddress', value: term } }
    : { ids: [q.trim()] }
  return runtime.inspect.listActors({ ...filter, ...(agentId ? { namedBy: { key: 'agentId', id: agentId, kind: 'agent' } } : {}), ...(match ? { match } : {}) })
}

export type GetOpsActorDeps = Pick<OpsPorts, 'runtime'>

/** One actor in full: its row, its snapshot, its live timers and its detail (effects, journal, dead letters); 404 for an unknown one. */
export async function getOpsActor({ runtime }: GetOpsActorDeps, { actorId }: { actorId: string }) {
  const { machineVersion, stateValue, snapshot, timers, ...summary } = (await runtime.inspect.actor(actorId)) ?? notFound('Actor')
  return { ...summary, machineVersion, stateValue, snapshot, liveTimers: timers, ...(await runtime.inspect.detail(summary.id)) }
}

export type GetActorTimelineDeps = Pick<OpsPorts, 'runtime' | 'store'>
export type GetActorTimelineInput = { actorId: string; before?: number | undefined; limit: number }

/**
 * One actor with its parent, children, transactions and latest dead letters (an agent: also the
 * latest 100 actors that name it, `namingAgent`, each with what started it), and one page of its
 * timeline (the route lays it out); `maxAttemptsOf` tells how many attempts an effect kind gets
 * (null: it never gives up).
 *
 * @example
 * const { actor, relations, page } = await getActorTimeline(deps, { actorId, limit: 100 })
 */
export async function getActorTimeline({ runtime, store }: GetActorTimelineDeps, input: GetActorTimelineInput) {
  const { inspect } = runtime
  const { machineVersion: _v, timers: _t, stateValue, snapshot, ...summary } = (await inspect.actor(input.actorId)) ?? notFound('Actor')
  const [page, relations, transactions, named] = await Promise.all([
    inspect.timeline(summary.id, { before: input.before, limit: input.limit }),
    inspect.relations(summary.id, summary.parentId),
    inspect.effectIdsOf(summary.id).then((ids) => (ids.length ? store.transactionsOf(ids) : [])),
    summary.kind === 'agent' ? namingAgent({ runtime, store }, summary.id) : [],
  ])
  return {
    actor: { ...summary, stateValue, snapshot },
    relations: { ...relations, transactions, namingAgent: named },
    page,
    maxAttemptsOf: inspect.maxAttemptsOf,
  }
}

/** The latest 100 actors naming an agent, each with what started it (a wallet operation's recorded parent when its actor has none). */
async function namingAgent({ runtime, store }: GetActorTimelineDeps, agentId: string): Promise<ActorSummary[]> {
  const actors = await runtime.inspect.actorsNaming({ key: 'agentId', id: agentId })
  const orphans = actors.filter((a) => a.parentId === null).map((a) => a.id)
  const facts = orphans.length ? await store.walletOpFacts(orphans) : new Map<string, { parentId: string | null }>()
  return actors.map((a) => (a.parentId === null && facts.get(a.id)?.parentId ? { ...a, parentId: facts.get(a.id)!.parentId } : a))
}

export type OpsActorStreamDeps = Pick<OpsPorts, 'runtime'>

/** What the console's live stream of one actor reads: its kind, its summary, and its final states; 404 for an unknown one. */
export async function opsActorStream({ runtime }: OpsActorStreamDeps, { actorId }: { actorId: string }) {
  const row = await runtime.inspect.actor(actorId)
  if (!row || runtime.inspect.isFinal(row.kind, row.status) === undefined) return notFound('Actor')
  const read = async (): Promise<ActorSummary> => {
    const { machineVersion: _v, stateValue: _s, snapshot: _n, timers: _t, ...summary } = (await runtime.inspect.actor(actorId)) ?? notFound('Actor')
    return summary
  }
  // A status is final when it names one of the machine's final states.
  const isFinal = (s: string) => runtime.inspect.isFinal(row.kind, s) === true
  return { kind: row.kind, read, isFinal }
}

export type ListNodesDeps = Pick<OpsPorts, 'runtime'>

/** The service's node processes with the shards and roles each holds (`leaseExpiresAt`: when its heartbeat runs out). */
export async function listNodes({ runtime }: ListNodesDeps) {
  return (await runtime.inspect.nodes()).map(({ expiresAt, ...n }) => ({ ...n, leaseExpiresAt: expiresAt }))
}

import { randomUUID } from 'node:crypto'
import type { AnyEventObject } from 'xstate'
import type pg from 'pg'
import type { SqlGuard } from './sql.ts'
import type { Logger } from './runtimeLogger.ts'
import type { ActorEntry, ActorKind, CreateArgs, EffectHandler, EffectRow } from './actorKind.ts'
import * as store from './actorStore.ts'
import type { NewEffect, Queryable } from './actorStore.ts'
import { createEffectWorker } from './effectWorker.ts'
import { createCommitWatch, waitForCommit } from './commitWatch.ts'
import { entryFromRow } from './snapshotLoader.ts'
import { childWithOutcome, SPAWN_CHILD, spawnChildHandler } from './childActors.ts'
import { createKeyedLock } from './keyedLock.ts'
import { createActorCache, NO_TRACE, type RuntimeCore, type TraceHooks } from './runtimeCore.ts'
import { adaptiveBatch, type AdaptiveBatch } from './batchSize.ts'
import { announceExternalCommit, applyEventWithin, createActor, describeCreation, sendCommand } from './applyEvent.ts'
import type { EffectScope } from './effectScope.ts'
import { drainInbox } from './drainInbox.ts'
import { createGroupCommitter } from './groupCommit.ts'
import { finishAndApply } from './effectOutcome.ts'
import { createPoller } from './poller.ts'
import { createShardLeases, type RoleHooks, type ShardLeases } from './shardLeases.ts'
import { createRemoteCommits } from './remoteCommits.ts'
import type { NodeBus } from './nodeBus.ts'
import { defaultRuntimeErrors, type RuntimeErrors } from './actorErrors.ts'
import { createAdministration, createInspection } from './inspect.ts'
import { createReadModel } from './read.ts'
import { createCompaction, retentionWindowMs, type RetentionOptions } from './compaction.ts'
import { compactionBacklog } from './compaction.store.ts'

export type ActorRuntimeOptions = {
  pool: pg.Pool
  kinds: ActorKind[]
  logger: Logger
  effectHandlers?: Record<string, EffectHandler>
  /** The errors a missing actor and a refused event throw (default: the runtime's own, see actorErrors.ts). */
  errors?: RuntimeErrors
  /** Actors kept in memory at most (least recently used are dropped; the row stays the truth). */
  cacheSize?: number
  /** How often due timers, unprocessed inbox rows and open effects are polled for. */
  pollMs?: number
  /** Attempts an effect gets before it fails for good (default 8; `persistentEffects` have no limit). The runtime answers it as `maxEffectAttempts`. */
  maxEffectAttempts?: number
  /** Group commit: statements in flight at once under a burst (default 2; a second only while a full batch waits); more commits wait and go out together. */
  commitConcurrency?: number
  /** How long a claimed effect stays this runtime's without a renewal (default 30 s; renewed every third of it). */
  effectLeaseMs?: number
  /** This runtime's name on effect and shard leases (default: a random id per runtime). */
  nodeId?: string
  /** How long a shard lease and the node's heartbeat last without a renewal (default 10 s; renewed every third of it). */
  shardLeaseMs?: number
  /** Jobs only one node may do at a time (the chain indexer), with what to do on taking or losing one. */
  roles?: Record<string, RoleHooks>
  /** Nudges between nodes (Postgres LISTEN/NOTIFY): a commit made on another node wakes this one's waiters at once. */
  bus?: NodeBus
  /** While other nodes live, how often a waiter also reads the row (default 250 ms; 2 s with a bus, whose nudges come at once). */
  remotePollMs?: number
  /** Retention of ended actors' history and of applied inbox rows (compaction.ts); absent: everything is kept. */
  retention?: RetentionOptions
  /** How a trace follows effects and inbox rows (see TraceHooks); absent: no trace is stored. */
  trace?: TraceHooks
}

export type ActorRuntime = ReturnType<typeof createActorRuntime>

/** `alongside`: a write that goes out in the insert's own statement (see AlongsideWrite). */

/**
 * The durable actor runtime. Machines are pure reducers; every accepted event is committed in
 * one statement (snapshot, journal, effects, timers, inbox row) before anything runs, effects
 * run after commit under stable ids and leases, and timers are rows that a poller turns into
 * inbox events. A child actor's end reaches its parent's inbox in the child's own commit.
 *
 * @example
 * const runtime = createActorRuntime({ pool, kinds: [agentKind], logger })
 * await runtime.create('agent', { id, accountId, input })
 * const entry = await runtime.send(id, { type: 'agent.start' })
 * runtime.start() // timers, inbox and effects pollers
 */
export function createActorRuntime(opts: ActorRuntimeOptions) {
  const { pool, logger } = opts
  const kinds = new Map(opts.kinds.map((k) => [k.kind, k]))
  const cache = createActorCache(opts.cacheSize ?? 10_000)
  const inFlight = new Set<Promise<unknown>>()
  const track = trackerOf(inFlight)
  const watch = createCommitWatch()
  const unloadable = new Set<string>()
  let stopped = true
  const owner = opts.nodeId ?? randomUUID()
  const leaseMs = opts.effectLeaseMs ?? 30_000
  const leases = createShardLeases({ pool, nodeId: owner, logger, ttlMs: opts.shardLeaseMs ?? 10_000, roles: opts.roles ?? {}, ...(opts.bus ? { bus: opts.bus } : {}) })
  const remote = opts.bus && createRemoteCommits({ bus: opts.bus, node: owner, watch, reload: (id) => core.load(id, { fresh: true }), alone: () => leases.alone() })
  const remotePollMs = opts.remotePollMs ?? (opts.bus ? 2_000 : 250)
  const core: RuntimeCore = {
    pool, logger, trace: opts.trace ?? NO_TRACE,
    errors: opts.errors ?? defaultRuntimeErrors,
    kindOf: (name) => kinds.get(name) ?? unknownKind(name),
    committer: createGroupCommitter(pool, { maxConcurrent: opts.commitConcurrency ?? 2 }),
    async load(id, { fresh = false } = {}) {
      const cached = cache.get(id)
      if (cached && !fresh) return cache.remember(cached)
      const row = await store.loadActor(pool, id)
      return row ? cache.remember(await entryFromRow(pool, core.kindOf(row.kind), row, logger)) : undefined
    },
    forget: cache.forget,
    committed({ entry, effects, timerDelays, notify }) {
      cache.remember(entry)
      watch.emit(entry)
      remote?.committed(entry.id)
      if (timerDelays.length > 0) poller.wake(Math.min(...timerDelays))
      // Written claimed by this runtime: they run now, with no claim statement (a stop in between
      // leaves them to the lease's expiry, or to whoever retires this node).
      if (!stopped && effects.length > 0) worker.runClaimed(effects.map((e) => claimedRow(entry, e)))
      if (!stopped) for (const n of notify) void drain(n.actorId)
    },
    claim: () => (stopped ? null : { owner, leaseMs }),
    awaitingCommit: new WeakMap(),
    retainMsOf: (kind, snapshot) => (opts.retention ? retentionWindowMs(opts.retention, kind, snapshot) : null),
    withLock: createKeyedLock(),
    track,
  }
  const drain = (id: string, known?: readonly store.InboxRow[]) => drainInbox(core, id, unloadable, known)
  const create = (kindName: string, args: CreateArgs, db?: Queryable) => createActor(core, kindName, args, db)
  const afterExternalCommit = (entry: ActorEntry) => announceExternalCommit(core, entry)

  const worker = createEffectWorker({
    pool, logger, trace: core.trace,
    handlers: { ...opts.effectHandlers, [SPAWN_CHILD]: spawnChildHandler(create) },
    persistent: new Set(opts.kinds.flatMap((k) => k.persistentEffects ?? [])),
    maxAttempts: opts.maxEffectAttempts ?? 8,
    owner,
    leaseMs,
    isStopped: () => stopped,
    track,
    loadActor: (id) => core.load(id),
    async finish(effect, outcome, writes) {
      if ((await finishAndApply(core, effect, outcome, writes)) && !stopped) await drain(effect.actorId)
    },
  })

  const batches: PollBatches = { timers: adaptiveBatch({ min: 50, max: 1000 }), inboxes: adaptiveBatch({ min: 50, max: 1000 }), effects: adaptiveBatch({ min: 25, max: 500 }) }
  const poll = () => pollOnce(pool, { shards: leases.shards(), node: owner }, { drain, unloadable, worker, logger, batches })
  const poller = createPoller({ pollMs: opts.pollMs ?? 250, logger, poll })
  const compaction = opts.retention && createCompaction({ pool, logger, retention: opts.retention, track, kinds: opts.kinds, kindOf: core.kindOf })
  const enqueue = enqueueAndDrain(pool, (id) => (stopped ? undefined : drain(id)), core.trace)

  return {
    create,
    /** Runs what a commit made by the caller's own transaction asked for (see `create` with `db`). */
    afterExternalCommit,
    /** Creates a child of the running effect's actor with that effect's outcome (see `childWithOutcome`). */
    createWithOutcome: (scope: EffectScope, kindName: string, args: CreateArgs & { parentId: string }, first?: AnyEventObject) =>
      childWithOutcome({ create, describe: (k, a) => describeCreation(core, k, a), kindOf: core.kindOf, afterExternalCommit, drain: (id) => void (stopped || drain(id)) }, scope, kindName, args, first),
    /** Sends a command and answers once the new state is committed; 409 when the state refuses it. */
    send: (id: string, rawEvent: unknown) => sendCommand(core, id, rawEvent),
    /** Waits for a committed state that satisfies `done`, up to `timeoutMs` (woken by commits, other nodes' too; while other nodes live, also reads the row every `remotePollMs`). */
    waitFor: (id: string, done: (entry: ActorEntry) => boolean, timeoutMs: number) =>
      waitForCommit({ watch, load: core.load, pollMs: leases.alone() ? undefined : remotePollMs }, id, done, timeoutMs),
    /** Calls `listener` after each commit of actor `id` heard by this process (its own, and other nodes' through the bus); returns the unsubscribe. */
    onCommit: (id: string, listener: (entry: ActorEntry) => void) => watch.on(id, listener),
    /** Enqueues an event for asynchronous processing (deduplicated by key), then processes it. */
    enqueue,
    enqueueIn: enqueueInTransaction(() => poller.wake(0), core.trace),
    applyWithin: (db: Queryable, id: string, event: unknown, opts?: { accountId?: string }) => applyEventWithin(core, db, id, event, opts),
    forget: (id: string) => core.forget(id),
    /** Polls now: inbox rows written outside the runtime (one statement for many actors) are drained without waiting for the next poll. */
    wake: () => poller.wake(0),
    /** The current entry: from the cache while this node is alone, else the row (any node may commit any actor). */
    get: (id: string) => core.load(id, { fresh: !leases.alone() }),
    kinds,
    maxEffectAttempts: opts.maxEffectAttempts ?? 8,
    /** An operator's reads (actors, inbox, timers, effects, journal, dead letters, counts) and actions (src/actors/runtime/inspect.ts). */
    inspect: createInspection(pool, kinds, opts.maxEffectAttempts ?? 8),
    admin: createAdministration(pool, enqueue),
    /** The app's read models over actor rows: by kind and id, by a context value, paged (src/actors/runtime/read.ts). */
    read: createReadModel(pool),
    /** Retention: one sweep now (what the sweeper does every `retention.sweepMs`), and its backlog. */
    retention: retentionApi(pool, compaction),
    /** Starts the pollers: overdue timers fire at once, leftover inbox rows and effects resume. */
    async start() {
      await leases.start()
      stopped = false
      await poller.start()
      compaction?.start()
    },
    /** Stops polling and hands this node's shards back once its work in flight has ended. */
    stop: () => {
      stopped = true
      poller.stop()
      compaction?.stop()
      return handOver(leases, inFlight, logger)
    },
    /** This runtime's node id and the shard leases it holds now. */
    node: () => ({ id: owner, shards: leases.held() }),
    cachedCount: () => cache.size(), // actors held in memory
  }
}

/** Keeps a promise in `inFlight` until it settles (a stop waits for them); answers it. */
const trackerOf = (inFlight: Set<Promise<unknown>>) =>
  function track<T>(p: Promise<T>): Promise<T> {
    inFlight.add(p)
    void p.finally(() => inFlight.delete(p)).catch(() => {})
    return p
  }

/** `runtime.retention`: a sweep now (none without retention options), and the compaction's backlog. */
const retentionApi = (pool: pg.Pool, compaction: ReturnType<typeof createCompaction> | undefined) => ({
  sweep: () => compaction?.sweep() ?? Promise.resolve({ compacted: 0, expired: 0, trimmed: 0 }),
  backlog: () => compactionBacklog(pool),
})

const unknownKind = (name: string): never => {
  throw new Error(`Unknown actor kind ${name}`)
}

/** `runtime.enqueue(id, accountId, event, dedupeKey?)`: an inbox row (deduplicated by key), then a drain while the runtime runs. */
const enqueueAndDrain = (pool: pg.Pool, drain: (id: string) => Promise<void> | undefined, trace: TraceHooks) =>
  async (id: string, accountId: string, event: AnyEventObject, dedupeKey: string | null = null) => {
    await store.enqueue(pool, { actorId: id, accountId, event, dedupeKey, trace: trace.current() })
    await drain(id)
  }

/**
 * `runtime.enqueueIn(db, id, accountId, event)`: enqueues an event in the caller's transaction
 * `db` (it commits with the caller's writes, or not at all); the caller calls the answer once
 * that transaction committed, and a poll drains it.
 */
const enqueueInTransaction = (wake: () => void, trace: TraceHooks) => (db: Queryable, id: string, accountId: string, event: AnyEventObject) =>
  store.enqueue(db, { actorId: id, accountId, event, dedupeKey: null, trace: trace.current() }).then(() => wake)

/**
 * One poll of the shards this node holds (null: all; none while its leases are not known to be
 * valid): due timers become inbox events, pending inboxes are drained, due effects claimed. Each
 * statement checks the leases again on the database clock, so a lease lost since takes nothing.
 */
async function pollOnce(
  pool: pg.Pool,
  scope: store.ShardScope,
  { drain, unloadable, worker, logger, batches }: {
    drain(id: string, known?: readonly store.InboxRow[]): Promise<void>
    unloadable: ReadonlySet<string>
    worker: { claimAndRun(shards: number[] | null, limit?: number): Promise<number> }
    logger: Logger
    batches: PollBatches
  },
): Promise<number | undefined> {
  if (scope.shards?.length === 0) return undefined
  // A fired timer's actor with nothing older in its inbox applies the claimed rows as they are.
  const fired = new Map<string, store.InboxRow[] | null>()
  const timerRows = await store.claimDueTimerEvents(pool, scope, batches.timers.size)
  for (const r of timerRows) {
    const rows = fired.get(r.actor_id)
    if (r.behind || rows === null) fired.set(r.actor_id, null)
    else fired.set(r.actor_id, [...(rows ?? []), r])
  }
  const pending = await store.actorsWithPendingInbox(pool, scope, batches.inboxes.size, [...unloadable])
  for (const id of pending) if (!fired.has(id)) fired.set(id, null)
  await Promise.all(
    [...fired].map(([id, known]) => drain(id, known ?? undefined).catch((err) => logger.error({ err, actorId: id }, 'inbox drain failed'))),
  )
  const effects = await worker.claimAndRun(scope.shards, batches.effects.size)
  // A claim that came back full leaves more waiting: poll again at once (no read of the next timer).
  // The inbox scan claims nothing (the same actors would be found again while their drains run):
  // its size follows its backlog, but a full scan waits for the next poll.
  batches.inboxes.took(pending.length)
  const more = [batches.timers.took(timerRows.length), batches.effects.took(effects)]
  if (more.some(Boolean)) return 0
  return store.nextTimerDelay(pool)
}

/** The poll's claim sizes, each following its own backlog (see batchSize.ts). */
type PollBatches = { timers: AdaptiveBatch; inboxes: AdaptiveBatch; effects: AdaptiveBatch }

/** An effect row as this runtime wrote it, claimed (params as stored: through JSON). */
function claimedRow(entry: ActorEntry, e: NewEffect): EffectRow {
  const params: unknown = JSON.parse(JSON.stringify(e.params ?? {}))
  return { id: e.id, actorId: entry.id, accountId: entry.accountId, kind: e.kind, params, status: 'pending', externalRef: null, result: null, attempts: 0, firstRun: true, trace: e.trace ?? null }
}

/**
 * A stop: other nodes poll the shards at once; work in flight gets a few seconds to finish, then
 * what still runs is released (this process is about to end) to the shards' new owners.
 */
async function handOver(leases: ShardLeases, inFlight: Set<Promise<unknown>>, logger: Logger): Promise<void> {
  const handedBack = leases.handBack()
  await Promise.race([Promise.allSettled([...inFlight]), new Promise((r) => setTimeout(r, 5000).unref())])
  await handedBack.then(leases.retire).catch((err: unknown) => logger.warn({ err }, 'shard leases not handed back; they expire by themselves'))
}

import { randomUUID } from 'node:crypto'
import { initialTransition, transition, type AnyEventObject, type AnyMachineSnapshot } from 'xstate'
import type pg from 'pg'
import type { Logger } from '../logger.ts'
import { InvalidStateError, NotFoundError } from '../domain/errors.ts'
import type { ActorEntry, ActorKind, EffectHandler } from './actorKind.ts'
import * as store from './actorStore.ts'
import type { Queryable } from './actorStore.ts'
import { releaseAllLeases } from './effectStore.ts'
import { createEffectWorker } from './effectWorker.ts'
import { createCommitWatch } from './commitWatch.ts'
import { entryFromRow } from './snapshotLoader.ts'
import { planActions, type Action } from './planActions.ts'
import { childEnd, childIdOf, SPAWN_CHILD, type SpawnChildParams } from './childActors.ts'
import { createKeyedLock } from './keyedLock.ts'

export type ActorRuntimeOptions = {
  pool: pg.Pool
  kinds: ActorKind[]
  logger: Logger
  effectHandlers?: Record<string, EffectHandler>
  /** Actors kept in memory at most (least recently used are dropped; the row stays the truth). */
  cacheSize?: number
  /** How often due timers, unprocessed inbox rows and open effects are polled for. */
  pollMs?: number
  maxEffectAttempts?: number
  /** Group commit: statements in flight at once (default 1); more commits wait and go out together. */
  commitConcurrency?: number
  /** How long a claimed effect stays this runtime's without a renewal (default 30 s; renewed every third of it). */
  effectLeaseMs?: number
  /** This runtime's name on effect leases (default: a random id per runtime). */
  nodeId?: string
  /**
   * Set only by a process that holds the boot lock (no other runtime on this database): leases
   * left by a crashed predecessor are released at start instead of waiting for them to expire.
   */
  soleRuntime?: boolean
}

export type ActorRuntime = ReturnType<typeof createActorRuntime>

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
  const cacheSize = opts.cacheSize ?? 10_000
  const pollMs = opts.pollMs ?? 250
  const committer = store.createGroupCommitter(pool, { maxConcurrent: opts.commitConcurrency ?? 1 })
  const cache = new Map<string, ActorEntry>()
  const withLock = createKeyedLock()
  const inFlight = new Set<Promise<unknown>>()
  const watch = createCommitWatch()
  /** Actors whose snapshot could not be read (already logged and marked stuck): not retried each poll. */
  const unloadable = new Set<string>()
  let stopped = true
  let pollTimer: NodeJS.Timeout | undefined

  const worker = createEffectWorker({
    pool,
    logger,
    handlers: { ...opts.effectHandlers, [SPAWN_CHILD]: spawnChild },
    persistent: new Set(opts.kinds.flatMap((k) => k.persistentEffects ?? [])),
    maxAttempts: opts.maxEffectAttempts ?? 8,
    owner: opts.nodeId ?? randomUUID(),
    leaseMs: opts.effectLeaseMs ?? 30_000,
    isStopped: () => stopped,
    track,
    afterFinish: (actorId) => drain(actorId),
  })

  function kindOf(name: string): ActorKind {
    const k = kinds.get(name)
    if (!k) throw new Error(`Unknown actor kind ${name}`)
    return k
  }

  function remember(entry: ActorEntry): ActorEntry {
    cache.delete(entry.id)
    cache.set(entry.id, entry)
    if (cache.size > cacheSize) {
      const oldest = cache.keys().next().value
      if (oldest !== undefined) cache.delete(oldest)
    }
    return entry
  }

  function track<T>(p: Promise<T>): Promise<T> {
    inFlight.add(p)
    void p.finally(() => inFlight.delete(p)).catch(() => {})
    return p
  }

  async function load(id: string, { fresh = false } = {}): Promise<ActorEntry | undefined> {
    const cached = cache.get(id)
    if (cached && !fresh) return remember(cached)
    const row = await store.loadActor(pool, id)
    return row ? remember(await entryFromRow(pool, kindOf(row.kind), row, logger)) : undefined
  }

  function persisted(entry: { kind: ActorKind; snapshot: AnyMachineSnapshot }) {
    return entry.kind.machine.getPersistedSnapshot(entry.snapshot)
  }

  /** After a commit: cache, tell waiters, start the effects, wake the timers and the parent. */
  function committed(entry: ActorEntry, effectIds: string[], timerDelays: number[], notify: store.Notify | null) {
    remember(entry)
    watch.emit(entry)
    if (timerDelays.length > 0) scheduleWake(Math.min(...timerDelays))
    if (!stopped) void track(worker.claimAndRun({ ids: effectIds }))
    if (notify && !stopped) void drain(notify.actorId)
  }

  /**
   * Creates an actor at version 1. Pass `db` (a client inside a transaction) to create it
   * atomically with other rows, e.g. the agent's own row.
   */
  async function create(
    kindName: string,
    { id, accountId, input, parentId = null }: { id: string; accountId: string; input: unknown; parentId?: string | null },
    db: Queryable = pool,
  ): Promise<ActorEntry> {
    const kind = kindOf(kindName)
    const [snapshot, actions] = initialTransition(kind.machine, input as never) as [AnyMachineSnapshot, Action[]]
    const plan = planActions(kind, id, 1, actions, {})
    const status = kind.statusOf(snapshot)
    const entry: ActorEntry = { id, kind, accountId, snapshot, version: 1, status, timers: plan.timers, parentId }
    await store.insertActor(db, {
      id,
      kind: kind.kind,
      accountId,
      machineVersion: kind.machineVersion,
      parentId,
      snapshot: persisted(entry),
      status,
      stateValue: snapshot.value,
      timers: plan.timers,
      event: { type: 'xstate.init' },
      effects: plan.effects,
      timerUpserts: plan.timerUpserts,
    })
    // A child that is final from the start still tells its parent.
    const notify = childEnd(entry)
    if (notify) await store.enqueue(db, { actorId: notify.actorId, accountId, event: notify.event, dedupeKey: notify.dedupeKey })
    if (db === pool) committed(entry, plan.effects.map((e) => e.id), plan.timerUpserts.map((t) => t.delayMs), notify)
    return entry
  }

  /** The built-in effect that starts a child actor; a retry finds the child already there. */
  async function spawnChild(effect: { actorId: string; accountId: string; params: unknown }) {
    const p = effect.params as SpawnChildParams
    const id = childIdOf(effect.actorId, p.key)
    await create(p.kind, { id, accountId: effect.accountId, input: p.input, parentId: effect.actorId }).catch((err) => {
      if ((err as { code?: string }).code !== '23505') throw err
    })
    return null
  }

  /** Runs what a commit made by the caller's own transaction asked for (see `create` with `db`). */
  function afterExternalCommit(entry: ActorEntry) {
    remember(entry)
    watch.emit(entry)
    if (!stopped) void track(worker.claimAndRun({ actorId: entry.id }))
  }

  /**
   * Whether a refusal (or a stale timer's drop) taken on `entry` stands: the actor must still be
   * at that version, else the decision is taken again on a fresh read. An inbox row is marked
   * processed in the same statement that checks the version.
   */
  async function refusalStands(entry: ActorEntry, inboxSeq: string | null): Promise<boolean> {
    if (!inboxSeq) return (await store.currentVersion(pool, entry.id)) === entry.version
    if (await store.dropInboxAt(pool, { seq: inboxSeq, actorId: entry.id, version: entry.version })) return true
    return store.inboxProcessed(pool, inboxSeq)
  }

  /**
   * Applies one event and commits it. Returns the new entry, `accepted: false` when the state
   * (at the row's current version) does not accept the event. Retries a lost race on a fresh read.
   */
  async function apply(
    id: string,
    event: AnyEventObject,
    { inboxSeq = null, timer }: { inboxSeq?: string | null; timer?: { key: string; generation: number } } = {},
  ): Promise<{ entry: ActorEntry; accepted: boolean }> {
    for (let attempt = 0; ; attempt++) {
      if (attempt > 5) throw new Error(`Actor ${id}: too many concurrent writers`)
      const entry = await load(id, { fresh: attempt > 0 })
      if (!entry) throw new NotFoundError('Actor')
      // A cancelled or replaced timer can never fire.
      const staleTimer = timer !== undefined && entry.timers[timer.key] !== timer.generation
      const liveTimers = { ...entry.timers }
      if (timer && !staleTimer) delete liveTimers[timer.key]
      const [next, actions] = staleTimer
        ? [entry.snapshot, []]
        : (transition(entry.kind.machine, entry.snapshot, event) as [AnyMachineSnapshot, Action[]])
      if (next === entry.snapshot) {
        if (await refusalStands(entry, inboxSeq)) return { entry, accepted: false }
        cache.delete(id)
        continue
      }
      const newVersion = entry.version + 1
      const plan = planActions(entry.kind, id, newVersion, actions, liveTimers)
      const status = entry.kind.statusOf(next)
      const candidate: ActorEntry = { ...entry, snapshot: next, version: newVersion, status, timers: plan.timers }
      const notify = childEnd(candidate)
      const version = await committer.commit({
        id,
        expectedVersion: entry.version,
        snapshot: persisted(candidate),
        status,
        stateValue: next.value,
        timers: plan.timers,
        event,
        inboxSeq,
        effects: plan.effects,
        timerDeletes: plan.timerDeletes,
        timerUpserts: plan.timerUpserts,
        notify,
      })
      if (version === undefined) {
        cache.delete(id)
        // Another node applied this inbox event first: it must not be applied again.
        if (inboxSeq && (await store.inboxProcessed(pool, inboxSeq))) return { entry: (await load(id, { fresh: true })) ?? entry, accepted: false }
        continue
      }
      committed(candidate, plan.effects.map((e) => e.id), plan.timerUpserts.map((t) => t.delayMs), notify)
      return { entry: candidate, accepted: true }
    }
  }

  /**
   * Sends a command and answers once the new state is committed.
   * Throws InvalidStateError (409) when the current state does not accept the event.
   */
  async function send(id: string, rawEvent: unknown): Promise<ActorEntry> {
    const current = await load(id)
    if (!current) throw new NotFoundError('Actor')
    const event = current.kind.parseEvent(rawEvent)
    return withLock(id, async () => {
      const { entry, accepted } = await apply(id, event)
      if (!accepted) throw new InvalidStateError({ event: event.type, state: entry.status })
      return entry
    })
  }

  /**
   * Processes every unprocessed inbox row of one actor, in order. A row whose event fails the
   * kind's validation is dead-lettered (kept with its error, the actor marked stuck), never lost.
   */
  function drain(id: string): Promise<void> {
    if (unloadable.has(id)) return Promise.resolve()
    return track(
      withLock(id, async () => {
        for (;;) {
          const rows = await store.pendingInbox(pool, id)
          if (rows.length === 0) return
          for (const row of rows) {
            const entry = await load(id).catch((err: unknown) => {
              unloadable.add(id)
              throw err
            })
            if (!entry) {
              await store.deadLetter(pool, { seq: row.seq, actorId: id, error: 'no such actor' })
              continue
            }
            let event: AnyEventObject
            try {
              event = entry.kind.parseEvent(row.event)
            } catch (err) {
              const error = describeInvalid(err)
              logger.error({ actorId: id, seq: row.seq, error }, 'inbox event failed validation; dead-lettered, actor marked stuck')
              await store.deadLetter(pool, { seq: row.seq, actorId: id, error })
              continue
            }
            const timer = row.timer_key !== null ? { key: row.timer_key, generation: Number(row.timer_generation) } : undefined
            await apply(id, event, { inboxSeq: row.seq, ...(timer ? { timer } : {}) })
          }
        }
      }),
    )
  }

  let wakeTimer: NodeJS.Timeout | undefined
  let wakeAt = Infinity
  /** Brings the next poll forward when a timer is due sooner than the regular interval. */
  function scheduleWake(delayMs: number) {
    if (stopped) return
    const at = Date.now() + delayMs
    if (at >= wakeAt) return
    if (wakeTimer) clearTimeout(wakeTimer)
    wakeAt = at
    wakeTimer = setTimeout(() => {
      wakeAt = Infinity
      void tick()
    }, delayMs + 5)
    wakeTimer.unref()
  }

  let ticking = false
  async function tick(): Promise<void> {
    if (ticking || stopped) return
    ticking = true
    try {
      const fired = await store.claimDueTimers(pool)
      const pending = await store.actorsWithPendingInbox(pool)
      await Promise.all(
        [...new Set([...fired, ...pending])].map((id) => drain(id).catch((err) => logger.error({ err, actorId: id }, 'inbox drain failed'))),
      )
      await worker.claimAndRun()
      const next = await store.nextTimerDelay(pool)
      if (next !== undefined && next < pollMs) scheduleWake(next)
    } catch (err) {
      logger.error({ err }, 'actor runtime poll failed')
    } finally {
      ticking = false
    }
  }

  /**
   * Waits, without polling, until the actor's committed state satisfies `done` or `timeoutMs`
   * passes; answers the latest state either way (undefined for an unknown actor).
   */
  async function waitFor(id: string, done: (entry: ActorEntry) => boolean, timeoutMs: number): Promise<ActorEntry | undefined> {
    let resolve!: (e: ActorEntry | undefined) => void
    const result = new Promise<ActorEntry | undefined>((r) => (resolve = r))
    const off = watch.on(id, (e) => done(e) && resolve(e))
    const timer = setTimeout(() => void load(id, { fresh: true }).then(resolve, () => resolve(cache.get(id))), timeoutMs)
    try {
      const current = await load(id)
      if (!current || done(current)) return current
      return await result
    } finally {
      off()
      clearTimeout(timer)
    }
  }

  return {
    create,
    afterExternalCommit,
    send,
    waitFor,
    /** Enqueues an event for asynchronous processing (deduplicated by key), then processes it. */
    async enqueue(id: string, accountId: string, event: AnyEventObject, dedupeKey: string | null = null) {
      await store.enqueue(pool, { actorId: id, accountId, event, dedupeKey })
      if (!stopped) await drain(id)
    },
    /** The current entry (from the cache, else the database). */
    get: (id: string) => load(id),
    kinds,
    /** Starts the pollers: overdue timers fire at once, leftover inbox rows and effects resume. */
    async start() {
      if (opts.soleRuntime) {
        const n = await releaseAllLeases(pool)
        if (n > 0) logger.info({ effects: n }, 'released effect leases left by an earlier process')
      }
      stopped = false
      await tick()
      pollTimer = setInterval(() => void tick(), pollMs)
      pollTimer.unref()
    },
    async stop() {
      stopped = true
      if (pollTimer) clearInterval(pollTimer)
      if (wakeTimer) clearTimeout(wakeTimer)
      // Work in flight gets a few seconds to finish; what does not is resumed by the next start.
      await Promise.race([Promise.allSettled([...inFlight]), new Promise((r) => setTimeout(r, 5000).unref())])
    },
    /** Number of actors held in memory. */
    cachedCount: () => cache.size,
  }
}

/** A validation failure in words, for the dead-letter row. */
function describeInvalid(err: unknown): string {
  const fields = (err as { fieldErrors?: Record<string, string> }).fieldErrors
  const message = err instanceof Error ? err.message : String(err)
  return fields ? `${message} ${JSON.stringify(fields)}` : message
}

import { initialTransition, transition, type AnyEventObject, type AnyMachineSnapshot } from 'xstate'
import type pg from 'pg'
import type { Logger } from '../logger.ts'
import { InvalidStateError, NotFoundError } from '../domain/errors.ts'
import type { ActorEntry, ActorKind, EffectHandler, EffectRow } from './actorKind.ts'
import * as store from './actorStore.ts'
import type { Queryable } from './actorStore.ts'

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
}

type PlannedActions = {
  effects: store.NewEffect[]
  timerUpserts: store.TimerUpsert[]
  timerDeletes: string[]
  timers: Record<string, number>
}

type Action = { type: string; params?: unknown }

/** Effect ids are stable: actor, the version the transition produced, and the action's index. */
const effectId = (actorId: string, version: number, index: number) => `${actorId}:${version}:${index}`

/**
 * Turns the actions of one transition into durable rows: custom effect actions become effects,
 * delayed raises become timers (generation = version * 1000 + index, unique per actor), and
 * cancels remove them. Only the net result per timer key is written.
 */
function planActions(kind: ActorKind, actorId: string, newVersion: number, actions: Action[], liveTimers: Record<string, number>): PlannedActions {
  const timers = { ...liveTimers }
  const upserts = new Map<string, store.TimerUpsert>()
  const deletes = new Set<string>()
  const effects: store.NewEffect[] = []
  actions.forEach((action, index) => {
    const params = (action.params ?? {}) as Record<string, unknown>
    if (action.type === 'xstate.raise' && typeof params.delay === 'number') {
      const key = String(params.id ?? (params.event as AnyEventObject).type)
      const generation = newVersion * 1000 + index
      timers[key] = generation
      deletes.delete(key)
      upserts.set(key, { key, generation, delayMs: params.delay, event: params.event })
    } else if (action.type === 'xstate.cancel') {
      const key = String(params.sendId)
      delete timers[key]
      upserts.delete(key)
      deletes.add(key)
    } else if (kind.effects.includes(action.type)) {
      effects.push({ id: effectId(actorId, newVersion, index), kind: action.type, params: action.params ?? {} })
    }
  })
  return { effects, timerUpserts: [...upserts.values()], timerDeletes: [...deletes], timers }
}

export type ActorRuntime = ReturnType<typeof createActorRuntime>

/**
 * The durable actor runtime. Machines are pure reducers; every accepted event is committed in
 * one statement (snapshot, journal, effects, timers, inbox row) before anything runs, effects
 * run after commit under stable ids, and timers are rows that a poller turns into inbox events.
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
  const handlers = opts.effectHandlers ?? {}
  const cacheSize = opts.cacheSize ?? 10_000
  const pollMs = opts.pollMs ?? 250
  const maxAttempts = opts.maxEffectAttempts ?? 8
  const persistent = new Set(opts.kinds.flatMap((k) => k.persistentEffects ?? []))
  const committer = store.createGroupCommitter(pool, { maxConcurrent: opts.commitConcurrency ?? 1 })
  const cache = new Map<string, ActorEntry>()
  const locks = new Map<string, Promise<unknown>>()
  const runningEffects = new Set<string>()
  const inFlight = new Set<Promise<unknown>>()
  let stopped = true
  let pollTimer: NodeJS.Timeout | undefined

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

  /** Serialises work on one actor inside this process; the version check guards across processes. */
  function withLock<T>(id: string, fn: () => Promise<T>): Promise<T> {
    const prev = locks.get(id) ?? Promise.resolve()
    const next = prev.then(fn, fn)
    const tail = next.catch(() => {})
    locks.set(id, tail)
    void tail.then(() => {
      if (locks.get(id) === tail) locks.delete(id)
    })
    return next
  }

  function track<T>(p: Promise<T>): Promise<T> {
    inFlight.add(p)
    void p.finally(() => inFlight.delete(p)).catch(() => {})
    return p
  }

  function fromRow(row: store.ActorRow): ActorEntry {
    const kind = kindOf(row.kind)
    return {
      id: row.id,
      kind,
      accountId: row.account_id,
      snapshot: kind.machine.resolveState(row.snapshot as never) as AnyMachineSnapshot,
      version: Number(row.version),
      status: row.status,
      timers: row.timers ?? {},
    }
  }

  async function load(id: string, { fresh = false } = {}): Promise<ActorEntry | undefined> {
    const cached = cache.get(id)
    if (cached && !fresh) return remember(cached)
    const row = await store.loadActor(pool, id)
    return row ? remember(fromRow(row)) : undefined
  }

  function persisted(entry: { kind: ActorKind; snapshot: AnyMachineSnapshot }) {
    return entry.kind.machine.getPersistedSnapshot(entry.snapshot)
  }

  /**
   * Creates an actor at version 1. Pass `db` (a client inside a transaction) to create it
   * atomically with other rows, e.g. the agent's own row.
   */
  async function create(
    kindName: string,
    { id, accountId, input }: { id: string; accountId: string; input: unknown },
    db: Queryable = pool,
  ): Promise<ActorEntry> {
    const kind = kindOf(kindName)
    const [snapshot, actions] = initialTransition(kind.machine, input as never) as [AnyMachineSnapshot, Action[]]
    const plan = planActions(kind, id, 1, actions, {})
    const status = kind.statusOf(snapshot)
    const entry: ActorEntry = { id, kind, accountId, snapshot, version: 1, status, timers: plan.timers }
    await store.insertActor(db, {
      id,
      kind: kind.kind,
      accountId,
      machineVersion: kind.machineVersion,
      snapshot: persisted(entry),
      status,
      stateValue: snapshot.value,
      timers: plan.timers,
      event: { type: 'xstate.init' },
      effects: plan.effects,
      timerUpserts: plan.timerUpserts,
    })
    if (db === pool) {
      remember(entry)
      launchEffects(plan.effects.map((e) => e.id))
    }
    return entry
  }

  /** Runs what a commit made by the caller's own transaction asked for (see `create` with `db`). */
  function afterExternalCommit(entry: ActorEntry) {
    remember(entry)
    if (!stopped) void track(store.openEffects(pool, { actorId: entry.id }).then((rows) => rows.forEach(runEffect)))
  }

  /**
   * Applies one event and commits it. Returns the new entry, `undefined` when the state does not
   * accept the event. Retries on a lost optimistic-version race with a fresh read.
   */
  async function apply(
    id: string,
    event: AnyEventObject,
    { inboxSeq = null, timer }: { inboxSeq?: string | null; timer?: { key: string; generation: number } } = {},
  ): Promise<{ entry: ActorEntry; accepted: boolean }> {
    for (let attempt = 0; ; attempt++) {
      const entry = await load(id, { fresh: attempt > 0 })
      if (!entry) throw new NotFoundError('Actor')
      let liveTimers = entry.timers
      if (timer) {
        if (entry.timers[timer.key] !== timer.generation) {
          // A cancelled or replaced timer: it can never fire.
          if (inboxSeq) await store.markInboxProcessed(pool, inboxSeq)
          return { entry, accepted: false }
        }
        liveTimers = { ...entry.timers }
        delete liveTimers[timer.key]
      }
      const [next, actions] = transition(entry.kind.machine, entry.snapshot, event) as [AnyMachineSnapshot, Action[]]
      if (next === entry.snapshot) {
        if (inboxSeq) await store.markInboxProcessed(pool, inboxSeq)
        return { entry, accepted: false }
      }
      const newVersion = entry.version + 1
      const plan = planActions(entry.kind, id, newVersion, actions, liveTimers)
      const status = entry.kind.statusOf(next)
      const candidate: ActorEntry = { ...entry, snapshot: next, version: newVersion, status, timers: plan.timers }
      const committed = await committer.commit({
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
      })
      if (committed === undefined) {
        cache.delete(id)
        // Another node applied this inbox event first: it must not be applied again.
        if (inboxSeq && (await store.inboxProcessed(pool, inboxSeq))) return { entry: (await load(id, { fresh: true })) ?? entry, accepted: false }
        if (attempt >= 5) throw new Error(`Actor ${id}: too many concurrent writers`)
        continue
      }
      remember(candidate)
      if (plan.timerUpserts.length > 0) scheduleWake(Math.min(...plan.timerUpserts.map((t) => t.delayMs)))
      launchEffects(plan.effects.map((e) => e.id))
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

  /** Processes every unprocessed inbox row of one actor, in order. */
  function drain(id: string): Promise<void> {
    return track(
      withLock(id, async () => {
        for (;;) {
          const rows = await store.pendingInbox(pool, id)
          if (rows.length === 0) return
          for (const row of rows) {
            const entry = await load(id)
            if (!entry) {
              await store.markInboxProcessed(pool, row.seq)
              continue
            }
            let event: AnyEventObject
            try {
              event = entry.kind.parseEvent(row.event)
            } catch (err) {
              logger.error({ err, actorId: id, seq: row.seq }, 'inbox event failed validation; dropped')
              await store.markInboxProcessed(pool, row.seq)
              continue
            }
            const timer =
              row.timer_key !== null ? { key: row.timer_key, generation: Number(row.timer_generation) } : undefined
            await apply(id, event, { inboxSeq: row.seq, ...(timer ? { timer } : {}) })
          }
        }
      }),
    )
  }

  function launchEffects(ids: string[]) {
    if (ids.length === 0 || stopped) return
    void track(store.openEffects(pool, { ids }).then((rows) => rows.forEach(runEffect)))
  }

  async function runEffect(effect: EffectRow): Promise<void> {
    if (runningEffects.has(effect.id) || stopped) return
    runningEffects.add(effect.id)
    try {
      const handler = handlers[effect.kind]
      if (!handler) throw new Error(`No handler for effect ${effect.kind}`)
      const event = await handler(effect, {
        record: (u) => store.recordEffectProgress(pool, effect.id, u),
      })
      await store.finishEffect(pool, effect, { status: 'done', event: { ...event, effectId: effect.id } })
      await drain(effect.actorId)
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err)
      if (!persistent.has(effect.kind) && effect.attempts + 1 >= maxAttempts) {
        logger.error({ err, effectId: effect.id }, 'effect failed for good')
        await store.finishEffect(pool, effect, {
          status: 'failed',
          event: { type: `${effect.kind}.failed`, effectId: effect.id, error: message },
          error: message,
        })
        await drain(effect.actorId)
      } else {
        const delayMs = Math.min(30_000, 200 * 2 ** effect.attempts)
        logger.warn({ err, effectId: effect.id, delayMs }, 'effect failed; will retry')
        await store.deferEffect(pool, effect.id, { delayMs, error: message })
      }
    } finally {
      runningEffects.delete(effect.id)
    }
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
      await Promise.all([...new Set([...fired, ...pending])].map(drain))
      const effects = await store.openEffects(pool)
      effects.forEach((e) => void track(runEffect(e)))
      const next = await store.nextTimerDelay(pool)
      if (next !== undefined && next < pollMs) scheduleWake(next)
    } catch (err) {
      logger.error({ err }, 'actor runtime poll failed')
    } finally {
      ticking = false
    }
  }

  return {
    create,
    afterExternalCommit,
    send,
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

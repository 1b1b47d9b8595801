import type { AnyEventObject } from 'xstate'
import type { SqlGuard, SqlWrite } from './sql.ts'
import type { ActorEntry, CreateArgs } from './actorKind.ts'
import { entryFromRow } from './snapshotLoader.ts'
import * as store from './actorStore.ts'
import type { Queryable } from './actorStore.ts'
import { childEnd } from './childActors.ts'
import { planActions } from './planActions.ts'
import { pureInitialTransition, pureTransition } from './pureTransition.ts'
import { initEvent } from './replay.ts'
import type { RuntimeCore, Transition } from './runtimeCore.ts'

const persisted = (entry: Pick<ActorEntry, 'kind' | 'snapshot'>) => entry.kind.machine.getPersistedSnapshot(entry.snapshot)


/** A new actor at version 1 as its insert will write it, its first effects claimed by this runtime. */
function planCreation(core: RuntimeCore, kindName: string, { id, accountId, input, parentId = null, alongside, guard }: CreateArgs) {
  const kind = core.kindOf(kindName)
  const [snapshot, actions] = pureInitialTransition(kind.machine, input)
  const plan = planActions(kind, id, 1, actions, {})
  const trace = core.trace.current()
  for (const e of plan.effects) e.trace = trace
  const status = kind.statusOf(snapshot)
  const entry: ActorEntry = { id, kind, accountId, snapshot, version: 1, status, timers: plan.timers, parentId }
  const claim = core.claim()
  const params: store.InsertActorParams = {
    id,
    kind: kind.kind,
    accountId,
    machineVersion: kind.machineVersion,
    parentId,
    snapshot: persisted(entry),
    status,
    stateValue: snapshot.value,
    timers: plan.timers,
    event: initEvent(input),
    effects: plan.effects,
    timerUpserts: plan.timerUpserts,
    claim,
    alongside: typeof alongside === 'function' ? alongside(plan.effects) : alongside,
    guard,
    trace,
  }
  // A child that is final from the start still tells its parent.
  const notify = childEnd(entry).map((n) => ({ ...n, trace }))
  const transition: Transition = { entry, effects: claim ? plan.effects : [], timerDelays: plan.timerUpserts.map((t) => t.delayMs), notify }
  return { entry, params, transition }
}

/**
 * Creates an actor at version 1, its first effects written claimed by this runtime. Pass `db`
 * (a client inside a short transaction) to create it atomically with other rows, e.g. the
 * agent's own row; the caller then hands the entry to `afterExternalCommit`, which runs them.
 */
export async function createActor(core: RuntimeCore, kindName: string, args: CreateArgs, db: Queryable = core.pool): Promise<ActorEntry> {
  const { entry, params, transition } = planCreation(core, kindName, args)
  entry.createdAt = await store.insertActor(db, params)
  for (const n of transition.notify) await store.enqueue(db, { actorId: n.actorId, accountId: entry.accountId, event: n.event, dedupeKey: n.dedupeKey, trace: n.trace ?? null })
  if (db === core.pool) core.committed(transition)
  else core.awaitingCommit.set(entry, transition)
  return entry
}

/**
 * A new actor's creation as a write described rather than run (branches named `child_*`), for
 * another statement to carry (its parent's commit on an effect's outcome): `afterCommit` runs its
 * first effects once that statement committed. `onlyIf` is a condition the insert must meet
 * (refused by making nothing). Undefined when the actor needs more than its insert (it is final
 * from the start and tells another actor).
 */
export function describeCreation(core: RuntimeCore, kindName: string, args: CreateArgs, onlyIf?: { sql: string; values: unknown[] }): { entry: ActorEntry; write: SqlWrite; afterCommit(): void } | undefined {
  const { entry, params, transition } = planCreation(core, kindName, args)
  if (transition.notify.length > 0) return undefined
  return { entry, write: store.insertActorWrite(params, 'child_', onlyIf), afterCommit: () => core.committed(transition) }
}

/** Runs what an actor created in a caller's transaction (`createActor` with `db`) asked for, once that transaction committed. */
export function announceExternalCommit(core: RuntimeCore, entry: ActorEntry): void {
  const t = core.awaitingCommit.get(entry)
  core.awaitingCommit.delete(entry)
  core.committed(t ?? { entry, effects: [], timerDelays: [], notify: [] })
}

/**
 * Applies `rawEvent` to actor `id` inside the caller's transaction `db`: the row is locked and
 * read (its snapshot migrated when another machine version wrote it), the machine's transition
 * planned, and committed in that transaction with the version fence, journal, effects and
 * timers, as any commit. `accountId` first moves the actor to that account (a market sale), so
 * the journal entry is the new owner's. Once the transaction committed, hand the entry to
 * `announceExternalCommit`; a rollback leaves nothing behind. A state that does not take the
 * event throws the runtime's `refused` error (`within`: true).
 *
 * @example
 * const entry = await withTransaction(pool, (tx) => applyEventWithin(core, tx, agentId, { type: 'market.sold', listingId, accountId }))
 * announceExternalCommit(core, entry)
 */
export async function applyEventWithin(core: RuntimeCore, db: Queryable, id: string, rawEvent: unknown, { accountId }: { accountId?: string } = {}): Promise<ActorEntry> {
  const row = await store.lockActor(db, id)
  if (!row) throw core.errors.notFound(id)
  const kind = core.kindOf(row.kind)
  const event = kind.parseEvent(rawEvent)
  if (accountId && accountId !== row.account_id) await store.setActorAccount(db, id, accountId)
  const entry = { ...(await entryFromRow(db, kind, row, core.logger)), accountId: accountId ?? row.account_id }
  const planned = planTransition(core, entry, event)
  if (!planned) throw core.errors.refused({ actorId: id, event: event.type, state: entry.status, within: true })
  if ((await store.commitTransition(db, { ...planned.params, inboxSeq: null })) === undefined) throw new Error(`Actor ${id}: its locked row changed under the lock`)
  core.awaitingCommit.set(planned.entry, planned)
  return planned.entry
}

/** A transition planned on an entry: the commit's parameters and what to announce once committed. */
export type PlannedTransition = Transition & { params: Omit<store.CommitParams, 'inboxSeq'> }

/**
 * The transition `event` makes from `entry`, as a commit (snapshot, journal, effects claimed by
 * this runtime, timers, a child's end for its parent); null when the state does not take it.
 */
export function planTransition(core: RuntimeCore, entry: ActorEntry, event: AnyEventObject, liveTimers = entry.timers): PlannedTransition | null {
  const [next, actions] = pureTransition(entry.kind.machine, entry.snapshot, event)
  // Refused: nothing changed and nothing asked for. (A transition that only asks for an effect or
  // a timer leaves xstate's snapshot as it was, and is committed all the same.)
  if (next === entry.snapshot && actions.length === 0) return null
  const newVersion = entry.version + 1
  const plan = planActions(entry.kind, entry.id, newVersion, actions, liveTimers)
  // What this transition writes carries the trace of the work that caused it (TraceHooks).
  const trace = core.trace.current()
  for (const e of plan.effects) e.trace = trace
  const status = entry.kind.statusOf(next)
  const candidate: ActorEntry = { ...entry, snapshot: next, version: newVersion, status, timers: plan.timers }
  const notify = childEnd(candidate).map((n) => ({ ...n, trace }))
  const claim = core.claim()
  return {
    entry: candidate,
    effects: claim ? plan.effects : [],
    timerDelays: plan.timerUpserts.map((t) => t.delayMs),
    notify,
    params: {
      id: entry.id,
      expectedVersion: entry.version,
      snapshot: persisted(candidate),
      status,
      stateValue: next.value,
      timers: plan.timers,
      event,
      effects: plan.effects,
      timerDeletes: plan.timerDeletes,
      timerUpserts: plan.timerUpserts,
      notify,
      claim,
      retainMs: next.status === 'done' && entry.snapshot.status !== 'done' ? core.retainMsOf(entry.kind, next) : null,
      trace,
    },
  }
}

/**
 * Whether a refusal (or a stale timer's drop) taken on `entry` stands: the actor must still be
 * at that version, else the decision is taken again on a fresh read. An inbox row is marked
 * processed in the same statement that checks the version.
 */
async function refusalStands(core: RuntimeCore, entry: ActorEntry, inboxSeq: string | null): Promise<boolean> {
  if (!inboxSeq) return (await store.currentVersion(core.pool, entry.id)) === entry.version
  if (await store.dropInboxAt(core.pool, { seq: inboxSeq, actorId: entry.id, version: entry.version })) return true
  return store.inboxProcessed(core.pool, inboxSeq)
}

/**
 * Applies one event and commits it (one statement: snapshot, journal, effects, timers, inbox
 * row, and a child's end for its parent). Returns the new entry, or `accepted: false` when the
 * state, at the row's current version, does not accept the event. Retries a lost race on a
 * fresh read. Call it under the actor's lock.
 */
export async function applyEvent(
  core: RuntimeCore,
  id: string,
  event: AnyEventObject,
  { inboxSeq = null, timer }: { inboxSeq?: string | null; timer?: { key: string; generation: number } } = {},
): Promise<{ entry: ActorEntry; accepted: boolean }> {
  for (let attempt = 0; ; attempt++) {
    if (attempt > 5) throw new Error(`Actor ${id}: too many concurrent writers`)
    const entry = await core.load(id, { fresh: attempt > 0 })
    if (!entry) throw core.errors.notFound(id)
    // A cancelled or replaced timer can never fire.
    const staleTimer = timer !== undefined && entry.timers[timer.key] !== timer.generation
    const liveTimers = { ...entry.timers }
    if (timer && !staleTimer) delete liveTimers[timer.key]
    const planned = staleTimer ? null : planTransition(core, entry, event, liveTimers)
    if (!planned) {
      if (await refusalStands(core, entry, inboxSeq)) return { entry, accepted: false }
      core.forget(id)
      continue
    }
    const version = await core.committer.commit({ ...planned.params, inboxSeq })
    if (version === undefined) {
      core.forget(id)
      // Another node applied this inbox event first: it must not be applied again.
      if (inboxSeq && (await store.inboxProcessed(core.pool, inboxSeq))) return { entry: (await core.load(id, { fresh: true })) ?? entry, accepted: false }
      continue
    }
    core.committed(planned)
    return { entry: planned.entry, accepted: true }
  }
}

/**
 * Sends a command and answers once the new state is committed. Throws the runtime's `refused` error
 * when the current state does not accept the event.
 */
export async function sendCommand(core: RuntimeCore, id: string, rawEvent: unknown): Promise<ActorEntry> {
  const current = await core.load(id)
  if (!current) throw core.errors.notFound(id)
  const event = current.kind.parseEvent(rawEvent)
  return core.withLock(id, async () => {
    const { entry, accepted } = await applyEvent(core, id, event)
    if (!accepted) throw core.errors.refused({ actorId: id, event: event.type, state: entry.status, within: false })
    return entry
  })
}

import type pg from 'pg'
import type { AnyEventObject } from 'xstate'
import type { ActorKind } from './actorKind.ts'
import * as read from './inspect.store.ts'
import { timelinePage, type TimelinePageQuery } from './inspectTimeline.store.ts'
import * as counts from './inspectCounts.store.ts'
import * as admin from './admin.store.ts'
import { listNodes } from './shardLease.store.ts'

export type { ActorQuery, ActorSummary, ActorInFull, NamedBy } from './inspect.store.ts'
export type { TimelinePage, TimelinePageQuery } from './inspectTimeline.store.ts'
export type { RuntimeCounts, EffectWork } from './inspectCounts.store.ts'
export type { Alongside, ClearedStuck, ResolvedDeadLetter } from './admin.store.ts'
export { eventTypeOf } from './inspect.store.ts'

/** "Failed only": in a failure state of its kind (each kind's `failureStates`). */
export type ActorListQuery = Omit<read.ActorQuery, 'inStates'> & { failed?: boolean | undefined }

/**
 * The runtime's inspection API (`runtime.inspect`): actors of every kind and account, their
 * inbox, timers, effects, journal and dead letters, the counts, and what the kinds declare
 * (failure states, final states, attempt limits, events unsafe to replay). It reads; it knows
 * kinds, ids, states and snapshots, nothing of what they mean to the app.
 *
 * @example
 * const page = await runtime.inspect.listActors({ kind: 'launch', failed: true, limit: 50 })
 */
export function createInspection(pool: pg.Pool, kinds: ReadonlyMap<string, ActorKind>, maxEffectAttempts: number) {
  const failureStates = () => Object.fromEntries([...kinds.values()].map((k) => [k.kind, k.failureStates ?? []]))
  const persistent = new Set([...kinds.values()].flatMap((k) => k.persistentEffects ?? []))
  return {
    /** Actors, ids ascending; one more than `limit` when a next page exists. */
    listActors: ({ failed, ...q }: ActorListQuery) => read.listActors(pool, { ...q, ...(failed ? { inStates: failureStates() } : {}) }),
    /** One actor with its snapshot and live timers, or undefined. */
    actor: (id: string) => read.findActor(pool, id),
    /** The account an actor belongs to and its state (`kind`: only an actor of that kind). */
    owner: (id: string, kind?: string) => read.actorOwner(pool, id, kind),
    /** Its last 100 timers, effects, journal entries and dead letters. */
    detail: (id: string) => read.actorDetail(pool, id),
    relations: (id: string, parentId: string | null) => read.actorRelations(pool, id, parentId),
    effectIdsOf: (actorId: string) => read.effectIdsOf(pool, actorId),
    timeline: (id: string, page: TimelinePageQuery) => timelinePage(pool, id, page),
    actorsOfKindNaming: (kind: string, named: read.NamedBy, limit?: number) => read.actorsOfKindNaming(pool, kind, named, limit),
    actorsNaming: (named: read.NamedBy, limit?: number) => read.actorsNaming(pool, named, limit),
    actorsNamingPage: (q: read.NamingPageQuery) => read.actorsNamingPage(pool, q),
    openDeadLetters: (limit: number) => read.listOpenDeadLetters(pool, limit),
    openDeadLetter: (seq: number) => read.openDeadLetter(pool, seq),
    counts: (work: counts.EffectWork = {}) => counts.runtimeCounts(pool, work),
    actorCounts: () => counts.actorCounts(pool),
    scanActorCounts: () => counts.scanActorCounts(pool),
    openEffectCount: () => counts.openEffectCount(pool),
    foldActorCounts: () => counts.foldActorCounts(pool),
    /** The service's node processes with the shards and roles each holds. */
    nodes: () => listNodes(pool),
    failureStates,
    /** How many attempts an effect kind gets (null: it never gives up). */
    maxAttemptsOf: (effectKind: string) => (persistent.has(effectKind) ? null : maxEffectAttempts),
    /** Whether the kind exists and the state is a final one of its machine (undefined for an unknown kind). */
    isFinal(kind: string, status: string): boolean | undefined {
      const k = kinds.get(kind)
      return k && (k.machine.root.states[status] as { type?: string } | undefined)?.type === 'final'
    },
    /** Whether the kind lists the event as unsafe to replay (a retry would move funds under an old check). */
    unsafeToReplay: (kind: string, eventType: string) => kinds.get(kind)?.unsafeToReplay?.includes(eventType) ?? false,
  }
}
export type RuntimeInspection = ReturnType<typeof createInspection>

/**
 * The runtime's administration API (`runtime.admin`): dead letters retried or discarded, a
 * stuck mark cleared, each in one transaction with the caller's `alongside` write (an audit).
 * A retried event is processed at once.
 *
 * @example
 * await runtime.admin.resolveDeadLetter({ seq, resolution: 'discarded' }, (tx, d) => audit(tx, d))
 */
export function createAdministration(pool: pg.Pool, enqueue: (id: string, accountId: string, event: AnyEventObject, dedupeKey: string) => Promise<void>) {
  return {
    async resolveDeadLetter(input: { seq: number; resolution: 'retried' | 'discarded' }, alongside?: admin.Alongside<admin.ResolvedDeadLetter>) {
      const done = await admin.resolveDeadLetter(pool, input, alongside)
      // The event was enqueued again in that transaction; this processes it now (the dedupe key inserts nothing twice).
      if (done?.dedupeKey) await enqueue(done.actorId, done.accountId, done.event as AnyEventObject, done.dedupeKey)
      return done
    },
    clearStuck: (actorId: string, alongside?: admin.Alongside<admin.ClearedStuck>) => admin.clearStuck(pool, actorId, alongside),
  }
}
export type RuntimeAdmin = ReturnType<typeof createAdministration>

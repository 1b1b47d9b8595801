import type pg from 'pg'
import * as read from './read.store.ts'

export type { ActorRecord, CarryingQuery, ContextEquals, CreatedBefore, InStatesQuery, KindRecord, NamingPage } from './read.store.ts'

/**
 * The runtime's read model (`runtime.read`): actors of a kind read as the app's records (a run,
 * an approval carried by an operation), each with its state, machine context and times. It knows
 * kinds, ids, states, context keys and values, nothing of what they mean to the app. Unlike
 * `runtime.get`, it never loads an actor into the cache; unlike `runtime.inspect`, it serves the
 * app's own requests, one statement per call.
 *
 * @example
 * const runs = await runtime.read.pageNaming({ kind: 'run', named: { key: 'agentId', value: agentId }, accountId, limit: 21 })
 */
export function createReadModel(pool: pg.Pool) {
  return {
    /** An actor of `kind` by id (undefined when there is none of that kind). */
    actorOfKind: <C>(kind: string, id: string) => read.actorOfKind<C>(pool, kind, id),
    /** Actors of `kind` by id, in one statement (others left out). */
    actorsOfKind: <C>(kind: string, ids: readonly string[]) => read.actorsOfKind<C>(pool, kind, ids),
    /** A page of one account's actors of a kind whose context names a value, newest first, by a (created_at, id) cursor. */
    pageNaming: <C>(q: read.NamingPage) => read.pageNaming<C>(pool, q),
    /** One actor of a kind in one of `statuses` whose context names a value (optionally only one created before an effect was planned). */
    firstInStates: (kind: string, statuses: readonly string[], named: read.ContextEquals, created?: read.CreatedBefore) =>
      read.firstInStates(pool, kind, statuses, named, created),
    /** One account's actors whose context carries an object at a path, ordered by a context path (keyset paged). */
    actorsCarrying: (q: read.CarryingQuery) => read.actorsCarrying(pool, q),
    /** The state of each actor of `kind` among `ids`, in one statement (ids without one are absent). */
    statesOf: (kind: string, ids: readonly string[]) => read.statesOf(pool, kind, ids),
    /** The number of actors of `kind` in each state (exact, from the trigger-kept totals). */
    countsOf: (kind: string) => read.countsOf(pool, kind),
    /** Actors of some kinds in the states asked for each, optionally naming one of some values, oldest first, with their contexts. */
    actorsInStates: <C>(q: read.InStatesQuery) => read.actorsInStates<C>(pool, q),
  }
}
export type RuntimeReadModel = ReturnType<typeof createReadModel>

import type pg from 'pg'
import type { AnyMachineSnapshot } from 'xstate'
import type { Logger } from './runtimeLogger.ts'
import type { ActorEntry, ActorKind } from './actorKind.ts'
import type { EffectClaim, NewEffect, Notify } from './actorStore.ts'
import type * as store from './actorStore.ts'
import type { RuntimeErrors } from './actorErrors.ts'

/** A committed transition, as the runtime announces it: the new entry and what it asked for. */
export type Transition = {
  entry: ActorEntry
  /** New effects written claimed by this runtime (run at once); empty when written unclaimed. */
  effects: NewEffect[]
  timerDelays: number[]
  /** The ends a child's final transition announces (to its parent and watchers); empty otherwise. */
  notify: Notify[]
}

/**
 * What the runtime's parts share: the pool, the kinds, the in-memory cache and the hooks that
 * run after a commit. Built once by `createActorRuntime`; the parts are plain functions of it.
 */
/**
 * How a trace follows the work across the durable boundary, handed in by the app (the runtime
 * knows no tracing library). `current()` is the trace context of the work in progress, an opaque
 * string (the app's is a W3C traceparent) or null; the runtime stores it with the effects and
 * inbox rows a transition writes. `within(trace, name, attributes, fn)` runs an effect or the
 * application of an inbox row in the context stored with it (null: a context of its own, never
 * the one of whatever started the poll).
 */
export type TraceHooks = {
  current(): string | null
  within<T>(trace: string | null, name: string, attributes: Record<string, string | number>, fn: () => Promise<T>): Promise<T>
}

/** No tracing: nothing stored, everything run as it is. */
export const NO_TRACE: TraceHooks = { current: () => null, within: (_trace, _name, _attributes, fn) => fn() }

export type RuntimeCore = {
  trace: TraceHooks
  pool: pg.Pool
  logger: Logger
  /** How a missing actor and a refused event are told to the caller. */
  errors: RuntimeErrors
  kindOf(name: string): ActorKind
  committer: { commit(p: store.CommitParams): Promise<number | undefined> }
  /** The entry from the cache, else the row (`fresh`: always the row). */
  load(id: string, opts?: { fresh?: boolean }): Promise<ActorEntry | undefined>
  forget(id: string): void
  /** After a commit: cache, tell waiters, run the claimed effects, wake the timers and the parent. */
  committed(t: Transition): void
  /** The claim new effects are written with: this runtime's, while it runs (null when stopped). */
  claim(): EffectClaim | null
  /** Actors created inside a caller's transaction, announced by `afterExternalCommit`. */
  awaitingCommit: WeakMap<ActorEntry, Transition>
  /** How long an actor that this snapshot ends keeps its full history (null: no retention, kept whole). */
  retainMsOf(kind: ActorKind, snapshot: AnyMachineSnapshot): number | null
  withLock<T>(id: string, fn: () => Promise<T>): Promise<T>
  track<T>(p: Promise<T>): Promise<T>
}

/** A bounded LRU map of loaded actors; evicting one loses nothing (the row is the truth). */
export function createActorCache(size: number) {
  const cache = new Map<string, ActorEntry>()
  return {
    get: (id: string) => cache.get(id),
    remember(entry: ActorEntry): ActorEntry {
      cache.delete(entry.id)
      cache.set(entry.id, entry)
      if (cache.size > size) {
        const oldest = cache.keys().next().value
        if (oldest !== undefined) cache.delete(oldest)
      }
      return entry
    },
    forget: (id: string) => void cache.delete(id),
    size: () => cache.size,
  }
}

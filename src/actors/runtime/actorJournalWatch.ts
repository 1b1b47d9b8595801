import type pg from 'pg'
import type { AnyMachineSnapshot } from 'xstate'
import type { ActorRuntime } from './actorRuntime.ts'
import { journalSince, journalStateAt, type JournalRow } from './actorJournal.store.ts'

/**
 * What a stream of an actor-backed resource reads (`core.actorEvents`, used by
 * src/http/actorEvents.ts): the actor's journal and this process's commit watch.
 */
export type ActorJournalWatch = {
  /** A kind's status of a journaled state value; undefined for a kind the runtime does not know. */
  kindOf(kind: string): { statusOf(stateValue: unknown): string } | undefined
  /** The journal rows after `afterSeq`, oldest first. */
  since(actorId: string, afterSeq: number): Promise<JournalRow[]>
  /** The state the actor had at journal row `seq`. */
  stateAt(actorId: string, seq: number): Promise<{ stateValue: unknown } | undefined>
  /** Calls `listener` on each commit of the actor in this process; returns the unsubscribe. */
  onCommit(actorId: string, listener: () => void): () => void
}

/**
 * @example
 * const watch = createActorJournalWatch(pool, runtime)
 * const off = watch.onCommit(launchId, () => void watch.since(launchId, seen).then(send))
 */
export function createActorJournalWatch(pool: pg.Pool, runtime: ActorRuntime): ActorJournalWatch {
  return {
    kindOf(name) {
      const kind = runtime.kinds.get(name)
      return kind && { statusOf: (value) => kind.statusOf({ value } as AnyMachineSnapshot) }
    },
    since: (actorId, afterSeq) => journalSince(pool, actorId, afterSeq),
    stateAt: (actorId, seq) => journalStateAt(pool, actorId, seq),
    onCommit: (actorId, listener) => runtime.onCommit(actorId, () => listener()),
  }
}

import type { AnyEventObject, AnyMachineSnapshot } from 'xstate'
import type { ActorKind } from './actorKind.ts'
import type { NewEffect } from './actorStore.ts'
import { planActions } from './planActions.ts'
import { pureInitialTransition, pureTransition } from './pureTransition.ts'

/** The type of an actor's first journal entry (seq 1): its creation. */
export const INIT_EVENT = 'xstate.init'

/** The journal entry of an actor's creation: xstate's init event, with the input the machine started from. */
export const initEvent = (input: unknown): AnyEventObject => ({ type: INIT_EVENT, input })

export type Replayed = {
  snapshot: AnyMachineSnapshot
  /** The snapshot as the runtime stores it (`actor.snapshot`): xstate's persisted snapshot, through JSON. */
  persisted: unknown
  /** The public status of that snapshot (`actor.status`). */
  status: string
  /** Every effect the transitions asked for, with the ids the runtime gives them (`<actorId>:<version>:<index>`), oldest first. */
  effects: NewEffect[]
}

/**
 * Folds an actor's journal (every entry from seq 1, oldest first: the init event with its input,
 * then each event as the runtime applied it) through its kind's machine, with the same pure
 * transition the runtime commits with. Transitions are pure, so the result is the stored snapshot
 * (`test/replay.test.ts` checks it for every actor after the service's scenarios), and the effects
 * asked for on the way are the effect rows the runtime wrote for `actorId`. Events are
 * taken as journaled (already parsed and stamped), not parsed again. Holds for a journal written
 * by the kind's current machine version; a snapshot migrated from an older version has a journal
 * the older machine wrote.
 *
 * @example
 * const { persisted, status, effects } = replayJournal(automationKind, (await journalEvents(pool, id)).map((j) => j.event), id)
 */
export function replayJournal(kind: ActorKind, events: readonly AnyEventObject[], actorId = ''): Replayed {
  const [first, ...rest] = events
  if (first?.type !== INIT_EVENT || !('input' in first)) {
    throw new Error(`a ${kind.kind} journal must start with ${INIT_EVENT} and the machine's input (actors created before inputs were journaled cannot be replayed)`)
  }
  let [snapshot, actions] = pureInitialTransition(kind.machine, first.input)
  const effects = planActions(kind, actorId, 1, actions, {}).effects
  rest.forEach((event, i) => {
    ;[snapshot, actions] = pureTransition(kind.machine, snapshot, event)
    effects.push(...planActions(kind, actorId, i + 2, actions, {}).effects)
  })
  return { snapshot, persisted: JSON.parse(JSON.stringify(kind.machine.getPersistedSnapshot(snapshot))), status: kind.statusOf(snapshot), effects }
}

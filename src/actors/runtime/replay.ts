import type { AnyEventObject, AnyMachineSnapshot } from 'xstate'
import type { ActorKind } from './actorKind.ts'
import type { NewEffect } from './actorStore.ts'
import { planActions } from './planActions.ts'
import { pureInitialTransition, pureTransition } from './pureTransition.ts'

/** The type of an actor's first journal entry (seq 1): its creation. */
export const INIT_EVENT = 'xstate.init'

/** The journal entry of an actor's creation: xstate's init event, with the input the machine started from. */
export const initEvent = (input: unknown): AnyEventObject => ({ type: INIT_EVENT, input })

/**
 * The type of the journal entry the loader writes when it migrates a stored snapshot to the
 * kind's machine version (`snapshotLoader.ts`). No machine takes it: it never reaches the inbox.
 */
export const MIGRATED_EVENT = 'actor.migrated'

/**
 * The journal entry of a migration: the machine versions it went from and to, and the snapshot
 * as the older version stored it. That snapshot is recorded because this build may no longer
 * have the older machine: replay starts again from it with the kind's own `migrate`, and, given
 * the older machine, checks that the entries before it fold to it.
 */
export type MigratedEvent = { type: typeof MIGRATED_EVENT; from: number; to: number; snapshot: unknown }

export const migratedEvent = (from: number, to: number, snapshot: unknown): MigratedEvent => ({ type: MIGRATED_EVENT, from, to, snapshot })

/**
 * The type of the entry the retention writes in place of a live actor's oldest history
 * (`compaction.ts`): the snapshot as of that entry's seq, written by machine version `version`.
 * A journal that starts with one folds from that snapshot; what came before it is gone.
 */
export const CHECKPOINT_EVENT = 'actor.checkpoint'

export type CheckpointEvent = { type: typeof CHECKPOINT_EVENT; version: number; snapshot: unknown }

export const checkpointEvent = (version: number, snapshot: unknown): CheckpointEvent => ({ type: CHECKPOINT_EVENT, version, snapshot })

const isCheckpoint = (e: AnyEventObject | undefined): e is CheckpointEvent => e?.type === CHECKPOINT_EVENT && typeof e.version === 'number'

const isMigration = (e: AnyEventObject): e is MigratedEvent => e.type === MIGRATED_EVENT && typeof e.from === 'number' && typeof e.to === 'number'

export type Replayed = {
  snapshot: AnyMachineSnapshot
  /** The snapshot as the runtime stores it (`actor.snapshot`): xstate's persisted snapshot, through JSON. */
  persisted: unknown
  /** The public status of that snapshot (`actor.status`). */
  status: string
  /** Every effect the transitions asked for, with the ids the runtime gives them (`<actorId>:<version>:<index>`), oldest first. */
  effects: NewEffect[]
  /**
   * The seq the fold starts from: 1, or the latest migration entry whose older machine was not
   * given (what came before it is taken as the snapshot that entry recorded). `effects` are those
   * of the entries from there on.
   */
  foldedFrom: number
}

/** Whether two JSON values are equal, whatever the order of their keys (the journal's jsonb reorders them). */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null || Array.isArray(a) !== Array.isArray(b)) return false
  const [ka, kb] = [Object.keys(a), Object.keys(b)]
  const [ra, rb] = [a as Record<string, unknown>, b as Record<string, unknown>]
  return ka.length === kb.length && ka.every((k) => k in rb && sameJson(ra[k], rb[k]))
}

const persistedOf = (kind: ActorKind, snapshot: AnyMachineSnapshot): unknown => JSON.parse(JSON.stringify(kind.machine.getPersistedSnapshot(snapshot)))

/**
 * Folds an actor's journal (every entry from seq 1, oldest first: the init event with its input,
 * then each event as the runtime applied it) through its kind's machine, with the same pure
 * transition the runtime commits with. Transitions are pure, so the result is the stored snapshot
 * (`test/replay.test.ts` checks it for every actor after the service's scenarios), and the effects
 * asked for on the way are the effect rows the runtime wrote for `actorId`. Events are
 * taken as journaled (already parsed and stamped), not parsed again.
 *
 * A journal that spans a machine version bump holds the loader's migration entry
 * (`MIGRATED_EVENT`) where the snapshot was migrated: the entries before it were written by the
 * older machine, those after it by the newer. At that entry the fold does what the loader did:
 * the kind's `migrate` on the snapshot the older version stored, resolved against the newer
 * machine. The entries before it are folded through the kind as version `from` defined it when
 * `earlier` has it (by machine version), and must then give the snapshot the entry recorded
 * (else this throws); without it, the fold starts at the migration from the recorded snapshot.
 *
 * @example
 * const { persisted, status, effects } = replayJournal(automationKind, (await journalEvents(pool, id)).map((j) => j.event), id)
 * const spanning = replayJournal(taskKindV2, events, id, { 1: taskKindV1 })
 */
export function replayJournal(kind: ActorKind, events: readonly AnyEventObject[], actorId = '', earlier: Readonly<Record<number, ActorKind>> = {}, firstSeq = 1): Replayed {
  const [first, ...rest] = events
  if (isCheckpoint(first)) return foldFromCheckpoint(kind, first, rest, actorId, earlier, firstSeq)
  if (first?.type !== INIT_EVENT || !('input' in first)) {
    throw new Error(`a ${kind.kind} journal must start with ${INIT_EVENT} and the machine's input (actors created before inputs were journaled cannot be replayed)`)
  }
  const kindAt = (version: number): ActorKind | undefined => (version === kind.machineVersion ? kind : earlier[version])
  // The machine version that created the actor: the one the first migration went from, else the kind's own.
  const created = rest.find(isMigration)?.from ?? kind.machineVersion
  let at = kindAt(created)
  let snapshot: AnyMachineSnapshot | undefined
  let foldedFrom = 1
  const effects: NewEffect[] = []
  if (at) {
    const [initial, actions] = pureInitialTransition(at.machine, first.input)
    snapshot = initial
    effects.push(...planActions(at, actorId, 1, actions, {}).effects)
  }
  rest.forEach((event, i) => {
    const seq = i + 2
    if (isMigration(event)) {
      if (at && snapshot && !sameJson(persistedOf(at, snapshot), event.snapshot)) {
        throw new Error(`${kind.kind} ${actorId}: the journal before seq ${seq} folds to another snapshot than the one migrated from version ${event.from}`)
      }
      if (!at || !snapshot) {
        foldedFrom = seq
        effects.length = 0
      }
      at = kindAt(event.to)
      if (!at?.migrate) throw new Error(`${kind.kind} ${actorId}: seq ${seq} migrated to machine version ${event.to}, which was not given or declares no migration`)
      snapshot = at.machine.resolveState(at.migrate(event.snapshot, event.from) as never) as AnyMachineSnapshot
      return
    }
    if (!at || !snapshot) return
    const [next, actions] = pureTransition(at.machine, snapshot, event)
    snapshot = next
    effects.push(...planActions(at, actorId, seq, actions, {}).effects)
  })
  if (!at || !snapshot) throw new Error(`${kind.kind} ${actorId}: written by machine version ${created}, which was not given, and never migrated`)
  return { snapshot, persisted: persistedOf(at, snapshot), status: at.statusOf(snapshot), effects, foldedFrom }
}

/**
 * The fold of a journal whose oldest entries the retention replaced by a checkpoint at seq
 * `firstSeq`: from the snapshot it recorded (migrated when an older machine version wrote it),
 * through the entries after it. `foldedFrom` is the checkpoint's seq; the effects are those of
 * the entries after it.
 */
function foldFromCheckpoint(kind: ActorKind, first: CheckpointEvent, rest: readonly AnyEventObject[], actorId: string, earlier: Readonly<Record<number, ActorKind>>, firstSeq: number): Replayed {
  const written = first.version === kind.machineVersion ? kind : earlier[first.version]
  let snapshot: AnyMachineSnapshot
  if (written) snapshot = written.machine.resolveState(first.snapshot as never) as AnyMachineSnapshot
  else if (kind.migrate) snapshot = kind.machine.resolveState(kind.migrate(first.snapshot, first.version) as never) as AnyMachineSnapshot
  else throw new Error(`${kind.kind} ${actorId}: checkpoint written by machine version ${first.version}, which was not given and cannot be migrated`)
  let at = written ?? kind
  const effects: NewEffect[] = []
  rest.forEach((event, i) => {
    const seq = firstSeq + i + 1
    if (isMigration(event)) {
      at = (event.to === kind.machineVersion ? kind : earlier[event.to]) ?? kind
      if (!at.migrate) throw new Error(`${kind.kind} ${actorId}: seq ${seq} migrated to machine version ${event.to}, which declares no migration`)
      snapshot = at.machine.resolveState(at.migrate(event.snapshot, event.from) as never) as AnyMachineSnapshot
      return
    }
    const [next, actions] = pureTransition(at.machine, snapshot, event)
    snapshot = next
    effects.push(...planActions(at, actorId, seq, actions, {}).effects)
  })
  return { snapshot, persisted: persistedOf(at, snapshot), status: at.statusOf(snapshot), effects, foldedFrom: firstSeq }
}

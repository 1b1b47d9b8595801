import type { AnyMachineSnapshot } from 'xstate'
import { z } from 'zod'
import type { Logger } from './runtimeLogger.ts'
import type { ActorEntry, ActorKind } from './actorKind.ts'
import { ActorUnloadableError } from './actorErrors.ts'
import * as store from './actorStore.ts'
import { migratedEvent } from './replay.ts'

/** The shape every persisted xstate snapshot has; the machine checks the state value itself. */
const persistedSnapshot = z.looseObject({
  status: z.enum(['active', 'done', 'error', 'stopped']),
  value: z.union([z.string(), z.record(z.string(), z.unknown())]),
  context: z.record(z.string(), z.unknown()),
})

/**
 * Turns a stored row into an entry: the snapshot is migrated when it was written by another
 * machine version, then parsed and resolved against the machine; a migrated one is committed at
 * once as a version of its own, with a journal entry of the migration (`MIGRATED_EVENT`), so
 * the next load needs no migration and replay knows where the machine changed. An actor that
 * cannot be read is marked stuck and refused with an error naming it (its stored snapshot left
 * as the older version wrote it, for an operator).
 */
export async function entryFromRow(db: store.Queryable, kind: ActorKind, row: store.ActorRow, logger: Logger): Promise<ActorEntry> {
  const refuse = async (reason: string, err?: unknown) => {
    logger.error({ err, actorId: row.id, kind: kind.kind }, `actor cannot be loaded: ${reason}`)
    await store.markStuck(db, row.id, reason)
    return new ActorUnloadableError(row.id, reason)
  }
  let version = Number(row.version)
  let status = row.status
  let raw = row.snapshot
  const stored = Number(row.machine_version)
  const migrating = stored !== kind.machineVersion
  if (migrating) {
    const from = `its snapshot was written by ${kind.kind} machine version ${stored}; this build runs version ${kind.machineVersion}`
    if (!kind.migrate) throw await refuse(`${from} and declares no migration from it.`)
    try {
      raw = kind.migrate(raw, stored)
    } catch (err) {
      throw await refuse(`${from} and its migration failed: ${err instanceof Error ? err.message : String(err)}`, err)
    }
  }
  const parsed = persistedSnapshot.safeParse(raw)
  if (!parsed.success) throw await refuse(`its snapshot is malformed (${parsed.error.issues.map((i) => `${i.path.join('.') || 'snapshot'}: ${i.message}`).join('; ')}).`)
  let snapshot: AnyMachineSnapshot
  try {
    snapshot = kind.machine.resolveState(raw as never) as AnyMachineSnapshot
  } catch (err) {
    throw await refuse(`its snapshot does not fit the ${kind.kind} machine: ${err instanceof Error ? err.message : String(err)}`, err)
  }
  if (migrating) {
    // The row takes the snapshot as a commit would store it (the machine's persisted form of the
    // resolved one). The journal entry records the snapshot as the older version stored it: the
    // one thing replay cannot compute once this build no longer has the older machine. When another
    // writer moved the row first, nothing is written and this entry keeps the version it read:
    // its commit then loses the version race, and the actor is loaded again.
    const saved = await store.saveMigratedSnapshot(db, {
      id: row.id, version, snapshot: kind.machine.getPersistedSnapshot(snapshot), machineVersion: kind.machineVersion, status: kind.statusOf(snapshot), stateValue: snapshot.value,
      event: migratedEvent(stored, kind.machineVersion, row.snapshot),
    })
    if (saved) [version, status] = [version + 1, kind.statusOf(snapshot)]
    logger.info({ actorId: row.id, from: stored, to: kind.machineVersion, saved }, 'actor snapshot migrated')
  }
  return {
    id: row.id,
    kind,
    accountId: row.account_id,
    snapshot,
    version,
    status,
    timers: row.timers ?? {},
    parentId: row.parent_id ?? null,
  }
}

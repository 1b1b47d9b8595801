import type { AnyMachineSnapshot } from 'xstate'
import { z } from 'zod'
import type { Logger } from './runtimeLogger.ts'
import type { ActorEntry, ActorKind } from './actorKind.ts'
import { ActorUnloadableError } from './actorErrors.ts'
import * as store from './actorStore.ts'

/** The shape every persisted xstate snapshot has; the machine checks the state value itself. */
const persistedSnapshot = z.looseObject({
  status: z.enum(['active', 'done', 'error', 'stopped']),
  value: z.union([z.string(), z.record(z.string(), z.unknown())]),
  context: z.record(z.string(), z.unknown()),
})

/**
 * Turns a stored row into an entry: the snapshot is migrated when it was written by another
 * machine version (and the migrated one stored), then parsed and resolved against the machine.
 * An actor that cannot be read is marked stuck and refused with an error naming it.
 */
export async function entryFromRow(db: store.Queryable, kind: ActorKind, row: store.ActorRow, logger: Logger): Promise<ActorEntry> {
  const refuse = async (reason: string, err?: unknown) => {
    logger.error({ err, actorId: row.id, kind: kind.kind }, `actor cannot be loaded: ${reason}`)
    await store.markStuck(db, row.id, reason)
    return new ActorUnloadableError(row.id, reason)
  }
  const version = Number(row.version)
  let raw = row.snapshot
  const stored = Number(row.machine_version)
  if (stored !== kind.machineVersion) {
    const from = `its snapshot was written by ${kind.kind} machine version ${stored}; this build runs version ${kind.machineVersion}`
    if (!kind.migrate) throw await refuse(`${from} and declares no migration from it.`)
    try {
      raw = kind.migrate(raw, stored)
    } catch (err) {
      throw await refuse(`${from} and its migration failed: ${err instanceof Error ? err.message : String(err)}`, err)
    }
    // Written at once (same version: the content means the same), so the next load needs no migration.
    await store.saveMigratedSnapshot(db, { id: row.id, version, snapshot: raw, machineVersion: kind.machineVersion })
    logger.info({ actorId: row.id, from: stored, to: kind.machineVersion }, 'actor snapshot migrated')
  }
  const parsed = persistedSnapshot.safeParse(raw)
  if (!parsed.success) throw await refuse(`its snapshot is malformed (${parsed.error.issues.map((i) => `${i.path.join('.') || 'snapshot'}: ${i.message}`).join('; ')}).`)
  let snapshot: AnyMachineSnapshot
  try {
    snapshot = kind.machine.resolveState(raw as never) as AnyMachineSnapshot
  } catch (err) {
    throw await refuse(`its snapshot does not fit the ${kind.kind} machine: ${err instanceof Error ? err.message : String(err)}`, err)
  }
  return {
    id: row.id,
    kind,
    accountId: row.account_id,
    snapshot,
    version,
    status: row.status,
    timers: row.timers ?? {},
    parentId: row.parent_id ?? null,
  }
}

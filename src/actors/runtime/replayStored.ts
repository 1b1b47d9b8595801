import type { ActorKind } from './actorKind.ts'
import { storedJournal } from './actorJournal.store.ts'
import { replayJournal, type Replayed } from './replay.ts'
import type { Queryable } from './sql.ts'

/** A stored actor replayed from its journal, or the word that its journal was compacted away. */
export type StoredReplay = ({ compacted: false } & Replayed) | { compacted: true; compactedAt: string }

/**
 * Replays a stored actor's journal (`replayJournal`), or answers `{ compacted: true }` for an
 * actor whose history the retention compacted (its row alone is kept: there is nothing to fold).
 * Throws when there is no such actor.
 *
 * @example
 * const r = await replayStored(pool, runKind, runId)
 * if (!r.compacted) expect(r.persisted).toEqual(storedSnapshot)
 */
export async function replayStored(db: Queryable, kind: ActorKind, id: string, earlier: Readonly<Record<number, ActorKind>> = {}): Promise<StoredReplay> {
  const stored = await storedJournal(db, id)
  if (!stored) throw new Error(`${kind.kind} ${id}: no such actor`)
  if (stored.compactedAt) return { compacted: true, compactedAt: stored.compactedAt }
  return { compacted: false, ...replayJournal(kind, stored.events.map((j) => j.event), id, earlier, stored.events[0]?.seq ?? 1) }
}

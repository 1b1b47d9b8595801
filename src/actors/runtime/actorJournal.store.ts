import type { Queryable } from './sql.ts'

export type JournalEvent = { seq: number; event: { type: string; [key: string]: unknown } }

/**
 * An actor's whole journal as events, oldest first (seq 1, its creation, onwards): what
 * `replayJournal` folds. For checks and tools, not for the hot path.
 *
 * @example
 * const { persisted } = replayJournal(kind, (await journalEvents(pool, actorId)).map((j) => j.event))
 */
export async function journalEvents(db: Queryable, actorId: string): Promise<JournalEvent[]> {
  const { rows } = await db.query<{ seq: string; event: JournalEvent['event'] }>('select seq, event from actor_journal where actor_id = $1 order by seq', [actorId])
  return rows.map((r) => ({ seq: Number(r.seq), event: r.event }))
}

export type JournalRow = { seq: number; stateValue: unknown; at: string }

/**
 * An actor's journal after `afterSeq`, oldest first (the primary key `(actor_id, seq)` serves it).
 * A compacted actor has no journal left: its row stands for its last entry (its version, state
 * and last change), so a follower of its events still hears how it ended.
 *
 * @example
 * const rows = await journalSince(pool, launchId, 0)
 */
export async function journalSince(db: Queryable, actorId: string, afterSeq: number, limit = 500): Promise<JournalRow[]> {
  const { rows } = await db.query<{ seq: string; state_value: unknown; at: Date | string }>(
    `select seq, state_value, at from actor_journal where actor_id = $1 and seq > $2
     union all
     select version, state_value, updated_at from actor where id = $1 and compacted_at is not null and version > $2
     order by seq limit $3`,
    [actorId, afterSeq, limit],
  )
  return rows.map((r) => ({ seq: Number(r.seq), stateValue: r.state_value, at: new Date(r.at).toISOString() }))
}

/** The state value journaled at `seq`, if that entry exists (a compacted actor's row stands for its last one). */
export async function journalStateAt(db: Queryable, actorId: string, seq: number): Promise<{ stateValue: unknown } | undefined> {
  const { rows } = await db.query<{ state_value: unknown }>(
    `select state_value from actor_journal where actor_id = $1 and seq = $2
     union all
     select state_value from actor where id = $1 and compacted_at is not null and version = $2`,
    [actorId, seq],
  )
  return rows[0] && { stateValue: rows[0].state_value }
}

/**
 * An actor's journal as `journalEvents` reads it, then whether the actor was compacted (read
 * after it: a compaction that committed before the journal was read is seen here too). Answers
 * undefined when there is no such actor.
 */
export async function storedJournal(db: Queryable, actorId: string): Promise<{ compactedAt: string | null; events: JournalEvent[] } | undefined> {
  const events = await journalEvents(db, actorId)
  const { rows } = await db.query<{ compacted_at: Date | string | null }>('select compacted_at from actor where id = $1', [actorId])
  if (!rows[0]) return undefined
  return { compactedAt: rows[0].compacted_at === null ? null : new Date(rows[0].compacted_at).toISOString(), events }
}

import type pg from 'pg'

/* The runtime's row and commit shapes, shared by its store's statements. */

/** Anything that can run a query: the pool, or a client inside a transaction. */
export type Queryable = Pick<pg.Pool, 'query'> | pg.PoolClient

export type ActorRow = {
  id: string
  kind: string
  account_id: string
  machine_version: number
  status: string
  state_value: unknown
  snapshot: unknown
  timers: Record<string, number>
  version: string
  parent_id: string | null
  stuck_reason: string | null
  created_at: Date
  updated_at: Date
}

export type TimerUpsert = { key: string; generation: number; delayMs: number; event: unknown }
/** `trace`: the trace context of the transition that asked for it (see TraceHooks), stored with the row. */
export type NewEffect = { id: string; kind: string; params: unknown; trace?: string | null }
/**
 * New effects written already claimed by the runtime that commits them and runs them right
 * after (no separate claim statement). The lease starts at the statement (`clock_timestamp()`),
 * so the transaction around it must be short.
 */
export type EffectClaim = { owner: string; leaseMs: number }

export type CommitParams = {
  id: string
  expectedVersion: number
  snapshot: unknown
  status: string
  stateValue: unknown
  timers: Record<string, number>
  event: unknown
  inboxSeq: string | null
  effects: NewEffect[]
  timerDeletes: string[]
  timerUpserts: TimerUpsert[]
  /** Events for other actors' inboxes in the same commit (a child's end, to its parent and watchers). */
  notify?: Notify[] | null
  /** Writes the new effects claimed (see EffectClaim); null or absent: left for any worker to claim. */
  claim?: EffectClaim | null
  /**
   * Fence for an event applied outside the inbox (an effect's outcome, in its finish): commit only
   * while the actor has no unprocessed inbox row, so events are never applied out of order.
   */
  requireEmptyInbox?: boolean
  /**
   * The effect whose outcome this transition applies, finished in the same statement: the
   * transition commits only while `owner` holds the effect's lease (the row is locked first).
   */
  finishEffect?: EffectFinish | null
  /** Set by the transition that ends the actor: its history may be compacted this many milliseconds after the commit. */
  retainMs?: number | null
  /** The trace context the transition ran in (see TraceHooks), stored with its journal entry; null or absent: none. */
  trace?: string | null
}

export type EffectFinish = { id: string; owner: string; status: 'done' | 'failed'; result: unknown; error: string | null }

export type Notify = { actorId: string; event: unknown; dedupeKey: string; trace?: string | null }

/** Timer upserts as the statements' JSON input. */
export const timerRows = (ts: TimerUpsert[]) => ts.map((t) => ({ key: t.key, generation: t.generation, delay_ms: t.delayMs, event: t.event }))

import type pg from 'pg'
import { actorSummary, deadLetterView, EFFECT_COLUMNS, effectView, JOURNAL_COLUMNS, journalView, timerView } from './inspect.store.ts'

type Db = Pick<pg.Pool, 'query'>
const iso = (v: string | Date) => new Date(v).toISOString()
/** At most this many effects, fired timers, children or dead letters in one page's time window. */
const WINDOW_MAX = 1000

export type TimelinePageQuery = {
  /** Journal entries before this seq (the `nextCursor` of the page before); absent: the newest. */
  before?: number | undefined
  limit: number
}

/** A timer that fired: claimed into the inbox at `firedAt` (`dueAt` null for one claimed before that was recorded). */
const firedTimerView = (t: Record<string, unknown>) => ({
  seq: Number(t.seq), key: t.timer_key as string, generation: Number(t.timer_generation), event: t.event as unknown,
  dueAt: t.timer_due_at ? iso(t.timer_due_at as string) : null, firedAt: iso(t.created_at as string),
  processedAt: t.processed_at ? iso(t.processed_at as string) : null,
})

/**
 * One page of an actor's timeline, newest first. The journal is the spine: up to `limit` entries
 * before the `before` seq. What else happened (effects created, timers fired, children started,
 * events dead-lettered) is taken from the same span of time: from the oldest entry's commit time
 * (none on the last page) to the commit time of the entry at `before` (none on the first), so
 * the pages partition the actor's history. Pending timers come with the first page only.
 * `nextBefore` is the seq to ask for next, null on the last page.
 *
 * @example
 * const first = await timelinePage(pool, id, { limit: 100 })
 * const older = first.nextBefore === null ? null : await timelinePage(pool, id, { before: first.nextBefore, limit: 100 })
 */
export async function timelinePage(db: Db, id: string, { before, limit }: TimelinePageQuery) {
  const { rows } = await db.query(
    `select ${JOURNAL_COLUMNS} from actor_journal where actor_id = $1 and ($2::bigint is null or seq < $2) order by seq desc limit $3`,
    [id, before ?? null, limit + 1],
  )
  const journal = rows.slice(0, limit)
  const low = rows.length > limit ? Number(journal.at(-1)!.seq) : null
  // $2: the oldest entry of this page (null: no lower bound), $3: the `before` entry (null: no upper bound).
  const span = (col: string) =>
    `($2::bigint is null or ${col} >= (select at from actor_journal where actor_id = $1 and seq = $2))
     and ($3::bigint is null or ${col} < (select at from actor_journal where actor_id = $1 and seq = $3))`
  const params = [id, low, before ?? null, WINDOW_MAX]
  const [effects, fired, children, dead, timers] = await Promise.all([
    db.query(`select ${EFFECT_COLUMNS} from effect where actor_id = $1 and ${span('created_at')} order by created_at desc limit $4`, params),
    db.query(
      `select seq, timer_key, timer_generation, timer_due_at, event, created_at, processed_at from actor_inbox
        where actor_id = $1 and timer_key is not null and ${span('created_at')} order by seq desc limit $4`,
      params,
    ),
    db.query(
      `select id, kind, account_id, status, version, stuck_reason, parent_id, created_at, updated_at, compacted_at from actor
        where parent_id = $1 and ${span('created_at')} order by created_at desc limit $4`,
      params,
    ),
    db.query(
      `select seq, event, error, dead_at, resolved_at, resolution, trace from actor_inbox
        where actor_id = $1 and dead_at is not null and ${span('dead_at')} order by seq desc limit $4`,
      params,
    ),
    before === undefined
      ? db.query('select timer_key, generation, due_at, event from actor_timer where actor_id = $1 order by due_at', [id])
      : { rows: [] as Record<string, unknown>[] },
  ])
  return {
    journal: journal.map(journalView),
    effects: effects.rows.map(effectView),
    firedTimers: fired.rows.map(firedTimerView),
    children: children.rows.map(actorSummary),
    deadLetters: dead.rows.map(deadLetterView),
    timers: timers.rows.map(timerView),
    nextBefore: low,
  }
}
export type TimelinePage = Awaited<ReturnType<typeof timelinePage>>

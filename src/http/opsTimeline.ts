import type { actorDetail, ActorSummary } from '../db/opsActors.store.ts'

type Detail = Awaited<ReturnType<typeof actorDetail>>

export type TimelineEntry =
  | { at: string; type: 'event'; seq: number; event: string; state: unknown }
  | { at: string; type: 'effect'; id: string; kind: string; status: string; attempts: number; durationMs: number | null; lastError: string | null; nextAttemptAt: string | null }
  | { at: string; type: 'timer'; key: string; dueAt: string; event: unknown }
  | { at: string; type: 'child'; id: string; kind: string; status: string }
  | { at: string; type: 'dead_letter'; seq: number; event: unknown; error: string; resolution: string | null }

const OPEN_EFFECT = new Set(['pending', 'prepared', 'sent'])

/**
 * One actor's history in time order for the console: journal events with the state they led
 * to, effects with their attempts, duration and last error, timers with their due time, children
 * with their outcome, dead letters with their resolution.
 *
 * @example
 * const timeline = buildTimeline(await actorDetail(pool, id), children)
 */
export function buildTimeline(detail: Detail, children: ActorSummary[]): TimelineEntry[] {
  const entries: TimelineEntry[] = [
    ...detail.journal.map((j): TimelineEntry => ({ at: j.at, type: 'event', seq: j.seq, event: j.event.type, state: j.stateValue })),
    ...detail.effects.map((e): TimelineEntry => {
      const open = OPEN_EFFECT.has(e.status)
      return {
        at: e.createdAt, type: 'effect', id: e.id, kind: e.kind, status: e.status, attempts: e.attempts,
        durationMs: open ? null : Date.parse(e.updatedAt) - Date.parse(e.createdAt), lastError: e.lastError,
        nextAttemptAt: open ? e.nextAttemptAt : null,
      }
    }),
    ...detail.timers.map((t): TimelineEntry => ({ at: t.dueAt, type: 'timer', key: t.key, dueAt: t.dueAt, event: t.event })),
    ...children.map((c): TimelineEntry => ({ at: c.createdAt, type: 'child', id: c.id, kind: c.kind, status: c.status })),
    ...detail.deadLetters.map((d): TimelineEntry => ({ at: d.deadAt, type: 'dead_letter', seq: d.seq, event: d.event, error: d.error, resolution: d.resolution })),
  ]
  return entries.sort((a, b) => a.at.localeCompare(b.at))
}

import type { TimelinePage as Page } from '../domain/ops/ports.ts'

export type TimelineEntry =
  | { at: string; type: 'event'; seq: number; event: string; state: unknown; traceId: string | null }
  | {
      at: string; type: 'effect'; id: string; kind: string; status: string; traceId: string | null
      attempts: number; attemptsMade: number; maxAttempts: number | null; inFlight: boolean
      lastAttemptAt: string | null; lastError: string | null; nextAttemptAt: string | null
      endedAt: string | null; durationMs: number | null; failedAttempts: { attempt: number; endedAt: string; error: string }[]
    }
  | { at: string; type: 'timer'; key: string; dueAt: string; event: unknown; fired: false }
  | { at: string; type: 'timer'; key: string; dueAt: string | null; event: unknown; fired: true; firedAt: string; seq: number }
  | { at: string; type: 'child'; id: string; kind: string; status: string }
  | { at: string; type: 'dead_letter'; seq: number; event: unknown; eventType: string | null; error: string; resolution: string | null; traceId: string | null }

/**
 * One page of an actor's history in time order for the console: journal events with the state
 * they led to, effects with their attempts (made, and at most: `maxAttempts`, null for an effect
 * that never gives up), the last error and the next try, timers pending and fired with their due
 * time, children with their outcome, dead letters with their resolution. `durationMs` is the
 * effect's creation to its end (every attempt and the back-off between them), null while open.
 * `traceId` is the trace an entry belongs to (docs/operations.md, Traces): an event's, the trace
 * its transition ran in (the request's, the effect's whose outcome it applied, a timer firing's
 * own); an effect's, the trace of the transition that asked for it; a dead letter's, the trace of
 * what sent it. Null when tracing was off.
 *
 * @example
 * const timeline = buildTimeline(await runtime.inspect.timeline(id, { limit: 100 }), (kind) => 8)
 */
export function buildTimeline(page: Page, maxAttemptsOf: (effectKind: string) => number | null): TimelineEntry[] {
  const entries: TimelineEntry[] = [
    ...page.journal.map((j): TimelineEntry => ({ at: j.at, type: 'event', seq: j.seq, event: j.event.type, state: j.stateValue, traceId: traceIdOf(j.trace) })),
    ...page.effects.map((e): TimelineEntry => ({
      at: e.createdAt, type: 'effect', id: e.id, kind: e.kind, status: e.status, traceId: traceIdOf(e.trace),
      attempts: e.attempts, attemptsMade: e.attemptsMade, maxAttempts: maxAttemptsOf(e.kind), inFlight: e.inFlight,
      lastAttemptAt: e.lastAttemptAt, lastError: e.lastError, nextAttemptAt: e.endedAt ? null : e.nextAttemptAt,
      endedAt: e.endedAt, durationMs: e.endedAt ? Date.parse(e.endedAt) - Date.parse(e.createdAt) : null, failedAttempts: e.failedAttempts,
    })),
    ...page.timers.map((t): TimelineEntry => ({ at: t.dueAt, type: 'timer', key: t.key, dueAt: t.dueAt, event: t.event, fired: false })),
    ...page.firedTimers.map((t): TimelineEntry => ({ at: t.firedAt, type: 'timer', key: t.key, dueAt: t.dueAt, event: t.event, fired: true, firedAt: t.firedAt, seq: t.seq })),
    ...page.children.map((c): TimelineEntry => ({ at: c.createdAt, type: 'child', id: c.id, kind: c.kind, status: c.status })),
    ...page.deadLetters.map((d): TimelineEntry => ({
      at: d.deadAt, type: 'dead_letter', seq: d.seq, event: d.event, eventType: d.eventType, error: d.error, resolution: d.resolution,
      traceId: traceIdOf(d.trace),
    })),
  ]
  // Times are to the millisecond: two commits of one actor within one are kept in journal order.
  const journalSeq = (e: TimelineEntry) => (e.type === 'event' ? (e.seq as number) : 0)
  return entries.sort((a, b) => a.at.localeCompare(b.at) || journalSeq(a) - journalSeq(b))
}

/** The trace id of a stored W3C traceparent (what src/app/traceHooks.ts stores), else null. */
export function traceIdOf(traceparent: string | null): string | null {
  return (traceparent && /^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$/.exec(traceparent)?.[1]) || null
}

/**
 * The fourth runtime migration: the trace context stored with the work a transition leaves for
 * later (an opaque string the app's TraceHooks give, a W3C traceparent in this service; null
 * when there is none). An effect row keeps the trace of the transition that asked for it, an
 * inbox row the trace of what sent it (an effect's outcome, a child's end, a message), so the
 * effect run later or on another node, and the transition its outcome causes, continue it.
 * A timer has none: its firing starts a trace of its own.
 */
export const TRACE_SQL = `
alter table effect add column if not exists trace text;
alter table actor_inbox add column if not exists trace text;
`

/**
 * The fifth runtime migration: the trace context a transition ran in, stored with its journal
 * entry (null when there was none), so an actor's timeline names the trace of each of its
 * transitions: the request's, the effect's whose outcome it applied, or the timer firing's own.
 * The journal outlives the inbox rows (retention deletes applied inbox events sooner).
 */
export const JOURNAL_TRACE_SQL = `
alter table actor_journal add column if not exists trace text;
`

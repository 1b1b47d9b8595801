/**
 * The third runtime migration: retention. An actor that reaches a final state is given the time
 * after which its history may go (`compact_after`, set by the commit that ended it, from its
 * kind's retention window); the compaction (`compaction.ts`) deletes its journal, effects, inbox
 * rows and timers after that and stamps `compacted_at`. The row itself stays: it is what the
 * API still serves (status, times, outcome, usage, the ids of what it started).
 *
 * Actors that ended before this migration get the longest default window (30 days) from their
 * last change: nothing is compacted sooner than a window in force when it ended promised.
 *
 * A live actor (not ended: an agent, an automation) keeps its full history for a window too: its
 * older journal entries are replaced by a checkpoint and its finished effects of that time go
 * (`history_trimmed_at`: when that was last done; the partial index finds the live actors due).
 */
export const RETENTION_SQL = `
alter table actor add column if not exists compact_after timestamptz, add column if not exists compacted_at timestamptz;
create index if not exists actor_compact_due on actor (compact_after) where compacted_at is null and compact_after is not null;
update actor set compact_after = updated_at + interval '30 days' where compact_after is null and snapshot->>'status' = 'done';
alter table actor add column if not exists history_trimmed_at timestamptz;
create index if not exists actor_live_history on actor ((coalesce(history_trimmed_at, created_at))) where compact_after is null and compacted_at is null;
create index if not exists actor_inbox_expiry on actor_inbox (processed_at) where processed_at is not null and dead_at is null;
`

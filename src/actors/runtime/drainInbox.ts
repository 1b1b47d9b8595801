import type { AnyEventObject } from 'xstate'
import { ActorUnloadableError } from './actorErrors.ts'
import * as store from './actorStore.ts'
import { applyEvent } from './applyEvent.ts'
import type { RuntimeCore } from './runtimeCore.ts'

/** Inbox rows read at a time. */
const INBOX_BATCH = 100

/**
 * Processes every unprocessed inbox row of one actor, in order, under its lock. A row whose
 * event fails the kind's validation is dead-lettered (kept with its error, the actor marked
 * stuck), never lost. `unloadable` collects actors whose snapshot cannot be read (already
 * logged and marked stuck), so polls do not retry them.
 */
export function drainInbox(core: RuntimeCore, id: string, unloadable: Set<string>, known?: readonly store.InboxRow[]): Promise<void> {
  if (unloadable.has(id)) return Promise.resolve()
  return core.track(
    core.withLock(id, async () => {
      // Rows the caller just wrote and read back (a timer's claim), with none older waiting: they
      // are the inbox, and are applied without reading it. A row another drain applied meanwhile
      // is refused by its commit's fence on the row and skipped.
      let first = known && known.length > 0 ? [...known].sort((a, b) => Number(a.seq) - Number(b.seq)) : undefined
      for (;;) {
        const rows = first ?? (await store.pendingInbox(core.pool, id, INBOX_BATCH))
        first = undefined
        if (rows.length === 0) return
        for (const row of rows) {
          const entry = await core.load(id).catch((err: unknown) => {
            if (err instanceof ActorUnloadableError) unloadable.add(id)
            throw err
          })
          if (!entry) {
            await store.deadLetter(core.pool, { seq: row.seq, actorId: id, error: 'no such actor' })
            continue
          }
          let event: AnyEventObject
          try {
            // A timer an older machine version armed under xstate's name: the machine hears the timer that replaced it.
            const renamed = row.timer_key !== null ? entry.kind.renamedTimers?.[row.timer_key] : undefined
            event = entry.kind.parseEvent(renamed ? { type: renamed } : row.event)
          } catch (err) {
            const error = describeInvalid(err)
            core.logger.error({ actorId: id, seq: row.seq, error }, 'inbox event failed validation; dead-lettered, actor marked stuck')
            await store.deadLetter(core.pool, { seq: row.seq, actorId: id, error })
            continue
          }
          const timer = row.timer_key !== null ? { key: row.timer_key, generation: Number(row.timer_generation) } : undefined
          // A timer's row carries no trace: its firing is a trace of its own, its span naming the timer.
          const attributes = { 'actor.id': id, 'actor.kind': entry.kind.kind, ...(timer ? { 'actor.timer.key': timer.key } : {}) }
          await core.trace.within(row.trace ?? null, `actor.inbox ${event.type}`, attributes, () =>
            applyEvent(core, id, event, { inboxSeq: row.seq, ...(timer ? { timer } : {}) }))
        }
        // A short batch was all there was: a row added since comes with a drain of its own
        // (queued behind this one's lock), or the poll finds it. Only a full batch reads again.
        if (rows.length < INBOX_BATCH) return
      }
    }),
  )
}

/** A validation failure in words, for the dead-letter row. */
function describeInvalid(err: unknown): string {
  const fields = (err as { fieldErrors?: Record<string, string> }).fieldErrors
  const message = err instanceof Error ? err.message : String(err)
  return fields ? `${message} ${JSON.stringify(fields)}` : message
}

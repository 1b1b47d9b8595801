import type { Logger } from '../../../logger.ts'
import type { SyncResult } from './pass.ts'

/**
 * Runs indexer passes on request, never two at once: a request during a pass causes one more
 * pass after it (however many requests came). Counts consecutive failures for the caller's
 * backoff; a failed pass is logged, not thrown.
 *
 * @example
 * const runner = createPassRunner({ pass, log, onPassed: (r) => waiters.settle(r.checkpoint), active: () => !stopped })
 * await runner.kick()
 */
export function createPassRunner({ pass, log, onPassed, active }: {
  pass: () => Promise<SyncResult>
  log: Logger
  onPassed: (result: SyncResult) => void
  /** Whether a requested follow-up pass should still run. */
  active: () => boolean
}) {
  let running: Promise<void> | undefined
  let again = false
  let failures = 0
  return {
    /** Runs a pass now, or one more right after the pass in flight; resolves when they are done. */
    kick(): Promise<void> {
      if (running) {
        again = true
        return running
      }
      running = (async () => {
        do {
          again = false
          try {
            onPassed(await pass())
            failures = 0
          } catch (err) {
            failures++
            log.warn({ err: err instanceof Error ? err.message : String(err), failures }, 'indexer pass failed; retrying')
          }
        } while (again && active() && failures === 0)
      })().finally(() => {
        running = undefined
      })
      return running
    },
    /** Consecutive failed passes (0 after a success). */
    failures: () => failures,
    /** The passes in flight, if any. */
    idle: async () => {
      await running
    },
  }
}

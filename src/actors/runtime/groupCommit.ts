import type pg from 'pg'
import { commitTransition, commitTransitions, type CommitParams } from './actorStore.ts'

/** Integrity violations (class 23), deadlocks and serialization failures: nothing was written. */
const rolledBack = (err: unknown) => {
  const code = (err as { code?: unknown }).code
  return typeof code === 'string' && (code.startsWith('23') || code === '40P01' || code === '40001')
}

/**
 * Group commit: transitions handed in while earlier statements are in flight are committed
 * together, at most `maxBatch` per statement and `maxConcurrent` statements at once. Under no
 * load a commit goes out alone and at once; under load, many actors' transitions share one
 * statement, one round trip and one WAL flush. A second statement goes out beside one in flight
 * only when a full batch waits (a burst: thousands of timers due at once): below that, waiting
 * to share the next statement costs less CPU per commit than sending another (commands over
 * HTTP), and above it one statement at a time leaves Postgres's second core idle. A batch that fails as a whole (a constraint or
 * a deadlock with another node) is retried one commit at a time, so one bad transition cannot
 * fail the others.
 *
 * @example
 * const committer = createGroupCommitter(pool)
 * const version = await committer.commit(params) // undefined: another writer won
 */
export function createGroupCommitter(pool: Pick<pg.Pool, 'query'>, { maxBatch = 64, maxConcurrent = 1 } = {}) {
  type Waiter = { params: CommitParams; resolve: (v: number | undefined) => void; reject: (err: unknown) => void }
  let queue: Waiter[] = []
  let active = 0
  let scheduled = false

  async function run(batch: Waiter[]) {
    try {
      const versions = await commitTransitions(pool, batch.map((w) => w.params))
      batch.forEach((w, i) => w.resolve(versions[i]))
    } catch (err) {
      // Only when Postgres says the statement rolled back is it safe to try again; after any
      // other error (a lost connection) the batch may have committed.
      if (batch.length === 1 || !rolledBack(err)) return batch.forEach((w) => w.reject(err))
      await Promise.all(
        batch.map((w) => commitTransition(pool, w.params).then(w.resolve, w.reject)),
      )
    }
  }

  // Another statement may go out: none is in flight, or a full batch waits beside one (a burst).
  const mayStart = () => active < maxConcurrent && (active === 0 || queue.length >= maxBatch)

  function flush() {
    scheduled = false
    while (queue.length > 0 && mayStart()) {
      const batch = queue.length <= maxBatch ? queue : queue.slice(0, maxBatch)
      queue = queue.length <= maxBatch ? [] : queue.slice(maxBatch)
      active++
      void run(batch).finally(() => {
        active--
        flush()
      })
    }
  }

  return {
    commit(params: CommitParams): Promise<number | undefined> {
      return new Promise((resolve, reject) => {
        queue.push({ params, resolve, reject })
        // Commits made in the same tick go out together.
        if (!scheduled && mayStart()) {
          scheduled = true
          queueMicrotask(flush)
        }
      })
    },
  }
}

import type { Logger } from '../../../logger.ts'

type Waiter = { block: number; done: (reached: boolean) => void }

/**
 * Callers waiting for the index to reach a block, each bounded by its own timeout.
 *
 * @example
 * const waiters = createBlockWaiters(log)
 * const reached = waiters.wait(42, 3000, () => 40)   // false after 3 s unless settle(>= 42) comes first
 * waiters.settle(42)
 */
export function createBlockWaiters(log: Logger) {
  const waiters = new Set<Waiter>()
  return {
    /** Resolves true when `settle` reaches `block`, false after `timeoutMs`. */
    wait(block: number, timeoutMs: number, indexed: () => number): Promise<boolean> {
      return new Promise<boolean>((resolve) => {
        const waiter: Waiter = {
          block,
          done(reached) {
            clearTimeout(limit)
            waiters.delete(waiter)
            resolve(reached)
          },
        }
        const limit = setTimeout(() => {
          log.warn({ block, indexed: indexed(), timeoutMs }, 'block not indexed in time; answering without it')
          waiter.done(false)
        }, timeoutMs)
        waiters.add(waiter)
      })
    },
    /** The index reached `processed`: wakes every waiter for a block up to it. */
    settle(processed: number) {
      for (const w of waiters) if (w.block <= processed) w.done(true)
    },
    /** Wakes every waiter with false (the indexer stopped). */
    releaseAll() {
      for (const w of waiters) w.done(false)
    },
  }
}

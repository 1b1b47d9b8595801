/**
 * A claim's batch size that follows the backlog, as graphile-worker sizes its batches: it starts
 * at `min`, doubles while claims come back full (more are waiting: the next claim takes more, up
 * to `max`), and halves while they come back under a quarter full (down to `min` again). A lone
 * due row is claimed at once whatever the size; the size only bounds how many one statement
 * moves, and so how long one poll holds the rows it claimed before it runs them.
 *
 * @example
 * const timers = adaptiveBatch({ min: 50, max: 1000 })
 * const rows = await claim(timers.size)
 * if (timers.took(rows.length)) pollAgainNow()
 */
export function adaptiveBatch({ min, max }: { min: number; max: number }) {
  let size = min
  return {
    get size() {
      return size
    },
    /** Records how many a claim of `size` found; answers whether it came back full (more may wait). */
    took(n: number): boolean {
      const full = n >= size
      if (full) size = Math.min(max, size * 2)
      else if (n < size / 4) size = Math.max(min, Math.floor(size / 2))
      return full
    },
  }
}

export type AdaptiveBatch = ReturnType<typeof adaptiveBatch>

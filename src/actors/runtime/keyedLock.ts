/**
 * Serialises async work per key inside this process (one actor's events, in order); across
 * processes the actor's version check guards instead.
 *
 * @example
 * const withLock = createKeyedLock()
 * await withLock(actorId, () => apply(actorId, event))
 */
export function createKeyedLock() {
  const locks = new Map<string, Promise<unknown>>()
  return function withLock<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const prev = locks.get(key) ?? Promise.resolve()
    const next = prev.then(fn, fn)
    const tail = next.catch(() => {})
    locks.set(key, tail)
    void tail.then(() => {
      if (locks.get(key) === tail) locks.delete(key)
    })
    return next
  }
}

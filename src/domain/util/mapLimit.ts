/**
 * Runs `fn` over `items`, at most `n` at a time, keeping order.
 *
 * @example
 * const balances = await mapLimit(tokens, 8, (t) => readBalance(t))
 */
export async function mapLimit<T, R>(items: readonly T[], n: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length)
  let next = 0
  await Promise.all(
    Array.from({ length: Math.min(n, items.length) }, async () => {
      while (next < items.length) {
        const i = next++
        out[i] = await fn(items[i]!)
      }
    }),
  )
  return out
}

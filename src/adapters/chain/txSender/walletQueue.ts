/**
 * Runs tasks one at a time per wallet, in the order they were queued, so that each wallet's
 * transactions reach the node in nonce order.
 *
 * @example
 * const queue = createWalletQueue()
 * await queue.run(address, () => broadcast(row))
 */
export function createWalletQueue() {
  const tails = new Map<string, Promise<unknown>>()
  return {
    run<T>(wallet: string, fn: () => Promise<T>): Promise<T> {
      const prev = tails.get(wallet) ?? Promise.resolve()
      const next = prev.then(fn, fn)
      const tail = next.catch(() => {})
      tails.set(wallet, tail)
      void tail.then(() => tails.get(wallet) === tail && tails.delete(wallet))
      return next
    },
  }
}
export type WalletQueue = ReturnType<typeof createWalletQueue>

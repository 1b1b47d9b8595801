import type { Client, PublicClient, WebSocketTransport } from 'viem'
import { watchBlockNumber } from 'viem/actions'
import type { Logger } from '../../logger.ts'
import type { SyncResult } from './pass.ts'

export type FollowOptions = {
  client: PublicClient
  log: Logger
  /** One indexer pass, serialised by the caller. */
  pass: () => Promise<SyncResult>
  /** Pause between passes when polling; default 1000 ms. */
  pollMs: number
  /**
   * While subscribed: a pass at least this often, for what new heads do not announce (a chain
   * reset to an older state, outbox rows to send again), and to notice a stalled subscription.
   */
  backstopMs: number
}

type Waiter = { block: number; done: (reached: boolean) => void }

/**
 * Follows the chain head and runs indexer passes. Over a WebSocket transport it subscribes to
 * new heads (`eth_subscribe newHeads`) and runs a pass as each one arrives; over HTTP, after a
 * subscription error, or when the subscription stalls (a backstop pass finds a head it never
 * announced), it polls every `pollMs` and tries to subscribe again after `backstopMs`. Passes
 * never overlap: heads that arrive during a pass cause one more pass after it.
 *
 * @example
 * const follower = createHeadFollower({ client, log, pass, pollMs: 1000, backstopMs: 5000 })
 * follower.start()
 * await follower.waitForBlock(42, { timeoutMs: 3000 })
 */
export function createHeadFollower({ client, log, pass, pollMs, backstopMs }: FollowOptions) {
  const canSubscribe = client.transport.type === 'webSocket'
  let stopped = true
  let timer: NodeJS.Timeout | undefined
  let unsubscribe: (() => void) | undefined
  let failures = 0
  let running: Promise<void> | undefined
  let again = false
  /** Checkpoint and head after the last successful pass. */
  let processed = -1
  let seenHead = -1
  /** Newest head the subscription announced; heads up to `baseline` were known when it began. */
  let announced = -1
  let baseline = -1
  /** Head seen by the previous timer tick: unannounced for a whole interval means stalled. */
  let prevTickHead = -1
  let resubscribeAt = 0
  const waiters = new Set<Waiter>()

  /** Records a pass's outcome: wakes waiters whose block is now indexed. */
  function passed(result: SyncResult): SyncResult {
    processed = Math.max(processed, result.checkpoint)
    seenHead = Math.max(seenHead, result.head)
    for (const w of waiters) if (w.block <= processed) w.done(true)
    return result
  }

  /** Runs a pass now, or one more right after the pass in flight. */
  function kick(): Promise<void> {
    if (running) {
      again = true
      return running
    }
    running = (async () => {
      do {
        again = false
        try {
          passed(await pass())
          failures = 0
        } catch (err) {
          failures++
          log.warn({ err: err instanceof Error ? err.message : String(err), failures }, 'indexer pass failed; retrying')
        }
      } while (again && !stopped && failures === 0)
    })().finally(() => {
      running = undefined
    })
    return running
  }

  function subscribe() {
    baseline = seenHead
    // Only called when the transport is a WebSocket (`canSubscribe`), which the type cannot see.
    unsubscribe = watchBlockNumber(client as unknown as Client<WebSocketTransport>, {
      poll: false,
      onBlockNumber(n) {
        announced = Math.max(announced, Number(n))
        void kick()
      },
      onError(err) {
        log.warn({ err: err.message }, 'new-heads subscription failed; polling until it is back')
        dropSubscription()
        schedule(0)
      },
    })
  }

  function dropSubscription() {
    unsubscribe?.()
    unsubscribe = undefined
    resubscribeAt = Date.now() + backstopMs
  }

  function schedule(ms: number) {
    if (timer) clearTimeout(timer)
    if (stopped) return
    timer = setTimeout(() => void tick(), ms)
    timer.unref()
  }

  async function tick() {
    timer = undefined
    await kick()
    if (stopped) return
    if (unsubscribe && failures === 0 && prevTickHead > Math.max(announced, baseline)) {
      log.warn({ announced, head: prevTickHead }, 'new-heads subscription stalled; polling until it is back')
      dropSubscription()
    }
    prevTickHead = seenHead
    if (canSubscribe && !unsubscribe && failures === 0 && Date.now() >= resubscribeAt) subscribe()
    const backoff = failures ? Math.min(pollMs * 2 ** Math.min(failures, 5), 30_000) : undefined
    schedule(backoff ?? (unsubscribe ? backstopMs : pollMs))
  }

  return {
    /** Runs a pass at once, then follows new heads (or polls). */
    start() {
      if (!stopped) return
      stopped = false
      schedule(0)
    },
    /** Stops following, waits for a pass in flight, and releases every waiter. */
    async stop() {
      stopped = true
      if (timer) clearTimeout(timer)
      timer = undefined
      unsubscribe?.()
      unsubscribe = undefined
      await running
      for (const w of waiters) w.done(false)
    },
    /** Records the outcome of a pass run from outside the loop (`syncOnce`). */
    passed,
    /**
     * Resolves true once block `block` is indexed (nudging a pass now), false after `timeoutMs`
     * or when the indexer is not running.
     */
    waitForBlock(block: number | bigint, { timeoutMs }: { timeoutMs: number }): Promise<boolean> {
      const n = Number(block)
      if (processed >= n) return Promise.resolve(true)
      if (stopped) return Promise.resolve(false)
      return new Promise<boolean>((resolve) => {
        const waiter: Waiter = {
          block: n,
          done(reached) {
            clearTimeout(limit)
            waiters.delete(waiter)
            resolve(reached)
          },
        }
        const limit = setTimeout(() => {
          log.warn({ block: n, indexed: processed, timeoutMs }, 'block not indexed in time; answering without it')
          waiter.done(false)
        }, timeoutMs)
        waiters.add(waiter)
        void kick()
      })
    },
  }
}

import type { Client, PublicClient, WebSocketTransport } from 'viem'
import { watchBlockNumber } from 'viem/actions'
import type { Logger } from '../../../logger.ts'
import { createBlockWaiters } from './blockWaiters.ts'
import { createPassRunner } from './passRunner.ts'
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
  /** Checkpoint and head after the last successful pass. */
  let processed = -1
  let seenHead = -1
  /** Newest head the subscription announced; heads up to `baseline` were known when it began. */
  let announced = -1
  let baseline = -1
  /** Head seen by the previous timer tick: unannounced for a whole interval means stalled. */
  let prevTickHead = -1
  let resubscribeAt = 0
  const waiters = createBlockWaiters(log)

  /** Records a pass's outcome: wakes waiters whose block is now indexed. */
  function passed(result: SyncResult): SyncResult {
    processed = Math.max(processed, result.checkpoint)
    seenHead = Math.max(seenHead, result.head)
    waiters.settle(processed)
    return result
  }

  const runner = createPassRunner({ pass, log, onPassed: passed, active: () => !stopped })
  const kick = runner.kick

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
    const failures = runner.failures()
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
      await runner.idle()
      waiters.releaseAll()
    },
    /** Whether the loop runs (this node indexes). */
    following: () => !stopped,
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
      const reached = waiters.wait(n, timeoutMs, () => processed)
      void kick()
      return reached
    },
  }
}

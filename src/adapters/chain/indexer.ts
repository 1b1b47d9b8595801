import type pg from 'pg'
import type { Logger } from '../../logger.ts'
import type { ChainHandle } from './chain.ts'
import type { CreditsRepository } from '../../domain/billing/ports.ts'
import { createHeadFollower } from './indexer/followHeads.ts'
import { runPass, type SyncResult } from './indexer/pass.ts'
import { createIndexerContext, readCheckpoint, type IndexerContext } from './indexer/indexerContext.ts'

export type { SyncResult } from './indexer/pass.ts'

/*
 * The chain indexer. It follows, from the manifest's start block (or its checkpoint):
 *   venue-a (BondingCurveLaunchpad): TokenCreated, Trade, Graduated, CreatorFeesClaimed  indexer/venueA.ts
 *   venue-b (InstantPoolLauncher):   PoolLaunched                                         indexer/venueB.ts
 *   FeeLocker:                       FeesAccrued, CreatorFeesClaimed                      indexer/feeLocker.ts
 *   SelfFundedToken (any address):   SelfFundedLaunch                                     indexer/selfFunded.ts
 *   AMM pools of launched tokens:    Swap, Sync                                           indexer/ammPool.ts
 *   Deposit addresses:               USDC Transfer to them, plain ETH transactions to them indexer/deposits.ts
 * and writes tokens, trades, market snapshots, creator fee events, the recent block hashes and
 * the checkpoint in one database transaction per block range (indexer/writeRange.ts).
 *
 * One pass (indexer/pass.ts): reorg check and rewind (indexer/reorg.ts), ranges up to the head
 * (indexer/indexRange.ts), re-confirmation of outbox rows a reorg put back
 * (indexer/reconfirmOutbox.ts), then deposits that have their confirmations are credited
 * (indexer/creditDeposits.ts).
 */

export type IndexerOptions = {
  pool: pg.Pool
  chain: ChainHandle
  logger: Logger
  /** Blocks behind the head that are indexed; default 0 (the embedded chain mines on demand). */
  confirmations?: number
  /** Pause between passes when polling (HTTP transport, or no working subscription); default 1000 ms. */
  pollMs?: number
  /** While following new heads by subscription, a pass at least this often; default 5000 ms. */
  backstopMs?: number
  /** Recent block hashes kept to find a common ancestor; default 64. */
  reorgDepth?: number
  /** Blocks per range (one getLogs + one database transaction); default 2000. */
  maxRange?: number
  /**
   * Follow transfers to accounts' deposit addresses and credit them after `confirmations`
   * blocks (indexer/deposits.ts, indexer/creditDeposits.ts); absent = deposits are not followed.
   */
  deposits?: { confirmations: number; credits: CreditsRepository }
}

export type Indexer = ReturnType<typeof createIndexer>

/**
 * Creates the indexer. `start()` runs a pass at once (reconciling a chain that came back behind
 * or reorged while we were down), then follows new heads (indexer/followHeads.ts: a WebSocket
 * subscription, else polling every `pollMs`); `syncOnce()` runs one pass now (serialised with
 * the loop) and indexes up to the head; `waitForBlock(n)` resolves once block n is indexed.
 *
 * @example
 * const indexer = createIndexer({ pool, chain, logger })
 * indexer.start()
 * await indexer.syncOnce()
 * await indexer.waitForBlock(receipt.blockNumber)
 * await indexer.stop()
 */
export function createIndexer(opts: IndexerOptions) {
  const ctx = createIndexerContext({ pool: opts.pool, chain: opts.chain, logger: opts.logger, reorgDepth: Math.max(2, opts.reorgDepth ?? 64), deposits: opts.deposits })
  const passOptions = { confirmations: opts.confirmations ?? 0, maxRange: Math.max(1, opts.maxRange ?? 2000) }

  let tail: Promise<unknown> = Promise.resolve()
  const listeners = new Set<(indexedTo: number) => Promise<void> | void>()
  /**
   * Tells the listeners how far the index reaches after every pass, the first after a start
   * included (blocks indexed while nobody listened are theirs to catch up on: each keeps its own
   * durable checkpoint). Not awaited: a listener never holds up the next pass (nor a
   * confirmation waiting for it); one that fails catches up after the next pass.
   */
  function announce(r: SyncResult) {
    for (const l of listeners) void Promise.resolve(l(r.checkpoint)).catch((err) => opts.logger.warn({ err: String(err) }, 'an indexed-blocks listener failed'))
  }
  /** Passes never overlap, whether the loop or a caller of `syncOnce` asks. */
  function serialPass(): Promise<SyncResult> {
    const next = tail.then(async () => {
      const r = await runPass(ctx, passOptions)
      announce(r)
      return r
    })
    tail = next.catch(() => {})
    return next
  }
  const follower = createHeadFollower({
    client: ctx.client, log: ctx.log, pass: serialPass, pollMs: opts.pollMs ?? 1000, backstopMs: opts.backstopMs ?? 5000,
  })

  return {
    /** One pass now: reorg check, index up to the head, outbox reconfirmation. */
    syncOnce: (): Promise<SyncResult> => serialPass().then(follower.passed),
    /**
     * Resolves true once block `block` is indexed, running a pass now if it is not; false after
     * `timeoutMs` (default 3 s). On a node that does not index (another node holds the
     * indexer's role), it reads the stored checkpoint until it reaches the block. The transaction sender awaits it
     * before a confirmation is answered, so a confirmed swap or launch is in every read.
     */
    waitForBlock: (block: number | bigint, { timeoutMs = 3000 }: { timeoutMs?: number } = {}): Promise<boolean> =>
      follower.following() ? follower.waitForBlock(block, { timeoutMs }) : checkpointReaches(ctx, Number(block), timeoutMs),
    /** Runs a pass at once, then one per new head (subscription) or every `pollMs` (polling). */
    start: follower.start,
    /** Calls `listener(indexedTo)` after each pass (the index reaches block `indexedTo`): what feeds the automations' price and launch triggers. */
    onIndexed(listener: (indexedTo: number) => Promise<void> | void) {
      listeners.add(listener)
    },
    /** Stops following and waits for a pass in flight. */
    async stop() {
      await follower.stop()
      await tail
    },
  }
}

/** Whether the stored checkpoint reaches `block` within `timeoutMs` (read every 50 ms): what another node's indexer wrote. */
async function checkpointReaches(ctx: IndexerContext, block: number, timeoutMs: number): Promise<boolean> {
  const until = Date.now() + timeoutMs
  for (;;) {
    const reached = await readCheckpoint(ctx).then((cp) => cp >= block, () => false)
    if (reached) return true
    if (Date.now() >= until) return false
    await new Promise((r) => setTimeout(r, 50))
  }
}

import { readCheckpoint, type IndexerContext } from './indexerContext.ts'
import { CheckpointMovedError, RangeReorgedError } from './indexerErrors.ts'
import { indexRange } from './indexRange.ts'
import { reconfirmOutbox } from './reconfirmOutbox.ts'
import { creditConfirmedDeposits } from './creditDeposits.ts'
import { rebroadcast, reconcile, verifyUnindexedOutbox } from './reorg.ts'

export type SyncResult = {
  /** Checkpoint after the pass. */
  checkpoint: number
  head: number
  /** Common ancestor when a reorg was undone in this pass. */
  reorgedTo: number | null
  /** Outbox transactions re-broadcast in this pass. */
  rebroadcast: number
}

/**
 * One pass: undo a reorg if the chain changed under the stored hashes, re-send outbox rows mined
 * in removed blocks, index up to `head - confirmations` in ranges of at most `maxRange` blocks,
 * then re-confirm the outbox rows a reorg put back and credit the deposits that have their
 * confirmations.
 */
export async function runPass(ctx: IndexerContext, { confirmations, maxRange }: { confirmations: number; maxRange: number }): Promise<SyncResult> {
  const { client, log } = ctx
  let reorgedTo: number | null = null
  let rebroadcastCount = 0
  const rewound = async () => {
    const r = await reconcile(ctx)
    if (r) {
      reorgedTo = reorgedTo === null ? r.ancestor : Math.min(reorgedTo, r.ancestor)
      rebroadcastCount += await rebroadcast(ctx, r.rows)
    }
  }
  const headNow = async () => Number(await client.getBlockNumber({ cacheTime: 0 }))
  await rewound()
  rebroadcastCount += await rebroadcast(ctx, await verifyUnindexedOutbox(ctx, await readCheckpoint(ctx)))
  // After the checks: re-broadcast transactions may already be in new blocks.
  let head = await headNow()
  for (let attempts = 0, moved = 0; ; ) {
    const cp = await readCheckpoint(ctx)
    const target = head - confirmations
    if (cp >= target) break
    const to = Math.min(target, cp + maxRange)
    try {
      await indexRange(ctx, cp + 1, to, head)
    } catch (err) {
      if (err instanceof CheckpointMovedError && ++moved <= 20) {
        log.debug({ reason: err.message }, 'another indexer wrote this range')
        continue
      }
      if (!(err instanceof RangeReorgedError) || ++attempts > 5) throw err
      log.info({ reason: err.message }, 'the chain changed while a range was read: checking for a reorg')
      await rewound()
      head = await headNow()
    }
  }
  await reconfirmOutbox(ctx)
  await creditConfirmedDeposits(ctx, head)
  return { checkpoint: await readCheckpoint(ctx), head, reorgedTo, rebroadcast: rebroadcastCount }
}

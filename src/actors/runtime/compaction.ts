import type pg from 'pg'
import type { AnyMachineSnapshot } from 'xstate'
import type { ActorKind } from './actorKind.ts'
import type { Logger } from './runtimeLogger.ts'
import { compactEnded, expireInbox } from './compaction.store.ts'

/**
 * Retention: how long an ended actor keeps its full history, by retention class (a kind names the
 * class of an ended snapshot with `retention`; `default` for the rest), and how long an applied
 * inbox row and its dedupe key are kept.
 */
export type RetentionOptions = {
  /** Milliseconds of full history per retention class; `default` is required. */
  windowsMs: Readonly<Record<string, number>> & { default: number }
  /** How long an applied inbox row (and its dedupe key) is kept, in milliseconds. */
  inboxMs: number
  /** Dedupe key prefixes whose applied inbox rows are kept another window (milliseconds), e.g. `{ 'hook:': 30 * 86_400_000 }`. */
  inboxByKeyPrefixMs?: Readonly<Record<string, number>>
  /** How often each node sweeps, in milliseconds. */
  sweepMs: number
  /** Actors compacted (or inbox rows expired) per statement (default 500). */
  batchSize?: number
}

/** Batches one sweep runs at most before it waits for the next (the rest is the backlog). */
const MAX_BATCHES = 20

/** The window an actor that has just ended keeps its history for, by its kind's retention class. */
export function retentionWindowMs(retention: RetentionOptions, kind: ActorKind, snapshot: AnyMachineSnapshot): number {
  const cls = kind.retention?.(snapshot) ?? 'default'
  return retention.windowsMs[cls] ?? retention.windowsMs.default
}

/**
 * The compaction's sweeper, run on every node: every `sweepMs`, batches of ended actors past their
 * window are compacted and applied inbox rows past theirs are deleted, until a batch comes back
 * short or `MAX_BATCHES` ran. Each batch is one statement taking its rows `skip locked`, so nodes
 * never compact the same actor and a crash mid-batch leaves that batch untouched.
 *
 * @example
 * const sweeper = createCompaction({ pool, logger, retention, track })
 * sweeper.start(); await sweeper.sweep(); sweeper.stop()
 */
export function createCompaction({ pool, logger, retention, track }: { pool: pg.Pool; logger: Logger; retention: RetentionOptions; track<T>(p: Promise<T>): Promise<T> }) {
  const limit = retention.batchSize ?? 500
  let timer: NodeJS.Timeout | undefined
  let running: Promise<{ compacted: number; expired: number }> | undefined

  async function batches(run: () => Promise<number>): Promise<number> {
    let total = 0
    for (let i = 0; i < MAX_BATCHES; i++) {
      const n = await run()
      total += n
      if (n < limit) break
    }
    return total
  }

  /** One sweep now (a sweep in progress is joined, not doubled); answers what it did. */
  function sweep(): Promise<{ compacted: number; expired: number }> {
    running ??= track(
      (async () => ({
        compacted: await batches(async () => (await compactEnded(pool, limit)).length),
        expired: await batches(() => expireInbox(pool, { olderThanMs: retention.inboxMs, byKeyPrefix: retention.inboxByKeyPrefixMs ?? {}, limit })),
      }))().finally(() => {
        running = undefined
      }),
    )
    return running
  }

  const schedule = () => {
    timer = setTimeout(() => {
      void sweep()
        .then((done) => {
          if (done.compacted + done.expired > 0) logger.info(done, 'retention sweep')
        })
        .catch((err: unknown) => logger.warn({ err }, 'retention sweep failed'))
        .finally(() => {
          if (timer) schedule()
        })
    }, retention.sweepMs)
    timer.unref()
  }

  return {
    sweep,
    start() {
      if (!timer) schedule()
    },
    stop() {
      if (timer) clearTimeout(timer)
      timer = undefined
    },
  }
}

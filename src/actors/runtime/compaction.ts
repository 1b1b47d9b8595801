import type pg from 'pg'
import type { AnyMachineSnapshot } from 'xstate'
import type { ActorKind } from './actorKind.ts'
import type { Logger } from './runtimeLogger.ts'
import { claimLiveHistories, compactEnded, expireInbox, journalOlderThan, trimHistory, type AppRows } from './compaction.store.ts'
import { checkpointEvent, replayJournal } from './replay.ts'

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
  /**
   * How long a live actor (not ended: an agent, an automation) keeps its full history: older
   * journal entries are replaced by a checkpoint (the snapshot as of the newest of them) and its
   * finished effects of that time are deleted. Absent: a live actor's history is kept whole.
   */
  liveHistoryMs?: number
  /** How often each node sweeps, in milliseconds. */
  sweepMs: number
  /**
   * Rows of the app's tables, by kind, that an actor's compaction deletes with its history when it
   * started no child (e.g. `{ run: [{ table: 'chat_message', column: 'turn_id' }] }`). Absent: kept.
   */
  quietRows?: Readonly<Record<string, readonly AppRows[]>>
  /** Actors compacted (or inbox rows expired) per statement (default 500). */
  batchSize?: number
}

/** What one sweep did: actors compacted, inbox rows expired, live actors whose history was looked at. */
export type SweepDone = { compacted: number; expired: number; trimmed: number }

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
 * const sweeper = createCompaction({ pool, logger, retention, track, kinds, kindOf })
 * sweeper.start(); await sweeper.sweep(); sweeper.stop()
 */
export function createCompaction({ pool, logger, retention, track, kinds, kindOf }: {
  pool: pg.Pool; logger: Logger; retention: RetentionOptions; track<T>(p: Promise<T>): Promise<T>
  kinds: readonly ActorKind[]; kindOf(name: string): ActorKind
}) {
  const limit = retention.batchSize ?? 500
  const drops = dropsOf(kinds)
  let timer: NodeJS.Timeout | undefined
  let running: Promise<SweepDone> | undefined

  /** One batch of live actors' histories trimmed (claimed every quarter of their window); answers the actors claimed. */
  async function trimLive(): Promise<number> {
    const windowMs = retention.liveHistoryMs
    if (windowMs === undefined) return 0
    const claimed = await claimLiveHistories(pool, { windowMs, everyMs: Math.max(1, Math.floor(windowMs / 4)), limit })
    for (const { id, kind: name } of claimed) {
      try {
        const old = await journalOlderThan(pool, id, windowMs)
        if (old.length < 2) continue
        const kind = kindOf(name)
        const { persisted } = replayJournal(kind, old.map((j) => j.event), id, {}, old[0]!.seq)
        await trimHistory(pool, { actorId: id, seq: old.at(-1)!.seq, checkpoint: checkpointEvent(kind.machineVersion, persisted) })
      } catch (err) {
        logger.warn({ err, actorId: id }, 'live history not trimmed (kept whole until a later sweep)')
      }
    }
    return claimed.length
  }

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
  function sweep(): Promise<SweepDone> {
    running ??= track(
      (async () => ({
        compacted: await batches(async () => (await compactEnded(pool, limit, drops, retention.quietRows)).length),
        expired: await batches(() => expireInbox(pool, { olderThanMs: retention.inboxMs, byKeyPrefix: retention.inboxByKeyPrefixMs ?? {}, limit })),
        trimmed: await batches(trimLive),
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
          if (done.compacted + done.expired + done.trimmed > 0) logger.info(done, 'retention sweep')
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

/** The context keys each kind's compaction drops (`compactDrops`). */
const dropsOf = (kinds: readonly ActorKind[]): Record<string, readonly string[]> =>
  Object.fromEntries(kinds.filter((k) => k.compactDrops?.length).map((k) => [k.kind, k.compactDrops!]))

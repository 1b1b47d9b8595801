import type { ActorEntry } from './actorKind.ts'
import { createKeyedListeners } from './keyedListeners.ts'

/**
 * The runtime's in-process notice of each commit, per actor id: a request that waits for an
 * actor's outcome listens here instead of reading the actor in a loop.
 */
export function createCommitWatch() {
  const listeners = createKeyedListeners<ActorEntry>()
  return {
    /** Calls `listener` after every commit of actor `id` this process hears of; returns the unsubscribe. */
    on: listeners.on,
    /** Whether anything in this process waits for commits of actor `id`. */
    watching: listeners.has,
    /** The actors something in this process waits for. */
    watched: listeners.keys,
    emit: (entry: ActorEntry): void => listeners.emit(entry.id, entry),
  }
}

export type CommitWatch = ReturnType<typeof createCommitWatch>

/**
 * Waits until the actor's committed state satisfies `done` or `timeoutMs` passes; answers the
 * latest state either way (undefined for an unknown actor). Woken by the commits the watch hears
 * of (this process's, and other nodes' through remoteCommits.ts); with `pollMs` (other nodes may
 * commit this actor and a nudge can be lost) the row is also read that often.
 */
export async function waitForCommit(
  { watch, load, pollMs }: { watch: CommitWatch; load(id: string, opts?: { fresh?: boolean }): Promise<ActorEntry | undefined>; pollMs?: number | undefined },
  id: string,
  done: (entry: ActorEntry) => boolean,
  timeoutMs: number,
): Promise<ActorEntry | undefined> {
  let resolve!: (e: ActorEntry | undefined) => void
  const result = new Promise<ActorEntry | undefined>((r) => (resolve = r))
  let latest: ActorEntry | undefined
  const off = watch.on(id, (e) => {
    latest = e
    if (done(e)) resolve(e)
  })
  const timer = setTimeout(() => void load(id, { fresh: true }).then(resolve, () => resolve(latest)), timeoutMs)
  const poll = pollMs
    ? setInterval(() => void load(id, { fresh: true }).then((e) => e && (latest = e) && done(e) && resolve(e), () => {}), pollMs)
    : undefined
  try {
    const current = await load(id)
    latest ??= current
    if (!current || done(current)) return current
    return await result
  } finally {
    off()
    clearTimeout(timer)
    clearInterval(poll)
  }
}

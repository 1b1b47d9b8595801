import { PassThrough, type Writable } from 'node:stream'
import type { Context } from 'koa'
import type { ActorJournalWatch } from '../actors/runtime/index.ts'

/** A commit made by another process wakes no watch here: the journal is read again this often. */
const BACKSTOP_MS = 2000
/** A comment line keeps proxies and idle timers from closing a quiet stream. */
const HEARTBEAT_MS = 15_000

export type ActorEventsOptions<T extends object> = {
  /** The actor behind the resource (a launch, run or swap id). */
  actorId: string
  /** The actor's kind, whose `statusOf` names each journaled state. */
  kind: string
  /** The resource as its GET answers it; throws (404) for another account, before anything is sent. */
  read(): Promise<T>
  /** Whether a status is final: the stream closes after sending it. */
  isFinal(status: string): boolean
  /** The resource as it is now, shown with an earlier `status` (default: the status replaced). */
  asOf?(resource: T, status: string): object
}

/** `Last-Event-ID`: the journal sequence number of the last event the client saw (0 when absent or not a number). */
export function lastEventIdOf(ctx: Context): number {
  const raw = ctx.get('Last-Event-ID').trim()
  return /^\d{1,15}$/.test(raw) ? Number(raw) : 0
}

/**
 * Streams an actor-backed resource as Server-Sent Events: one event per change of its status,
 * `id:` the journal sequence number of the commit that made it and `data:` the resource with
 * that `status`; closes after a final status. Woken by the runtime's commit watch (and a
 * backstop re-read of the journal); resumes after `Last-Event-ID`, so a reconnecting client
 * misses no state. States already past when the stream reads them carry the resource as it is
 * now, with the status that state had.
 *
 * @example
 * router.get('/:id/events', (ctx) => streamActorEvents(ctx, core.actorEvents, { actorId: id, kind: 'launch', read, isFinal }))
 */
export async function streamActorEvents<T extends object>(
  ctx: Context,
  journal: ActorJournalWatch,
  opts: ActorEventsOptions<T>,
): Promise<void> {
  await opts.read()
  const out = new PassThrough()
  const follower = await followActorEvents(out, journal, opts, lastEventIdOf(ctx))
  ctx.req.socket.setTimeout(0)
  ctx.status = 200
  ctx.set({ 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-cache', 'X-Accel-Buffering': 'no' })
  ctx.body = out
  void follower.ended.then(() => out.end())
  // The response's close: the client went away (the request's own close fires once its body is read).
  ctx.res.on('close', follower.stop)
  out.on('error', follower.stop)
}

/**
 * Writes an actor's status events (as streamActorEvents sends them) after journal sequence
 * `since` into `out`, until a final status (then `ended` resolves) or `stop()`. For a stream
 * that carries other events besides (a streamed chat turn).
 *
 * @example
 * const follower = await followActorEvents(out, core.actorEvents, { actorId: turnId, kind: 'chatturn', read, isFinal }, 0)
 * await follower.ended
 */
export async function followActorEvents<T extends object>(
  out: Writable,
  journal: ActorJournalWatch,
  opts: ActorEventsOptions<T>,
  since: number,
): Promise<{ ended: Promise<void>; stop(): void }> {
  const kind = journal.kindOf(opts.kind)
  if (!kind) throw new Error(`Unknown actor kind ${opts.kind}`)
  const { statusOf } = kind
  const asOf = opts.asOf ?? ((resource: T, status: string) => ({ ...resource, status }))
  let sent = since
  const resumedAt = sent > 0 ? await journal.stateAt(opts.actorId, sent) : undefined
  let lastStatus = resumedAt ? statusOf(resumedAt.stateValue) : undefined

  let closed = false
  let running: Promise<void> | undefined
  let again = false
  let ended!: () => void
  const endedPromise = new Promise<void>((resolve) => (ended = resolve))
  const close = () => {
    if (closed) return
    closed = true
    off()
    clearInterval(backstop)
    clearInterval(heartbeat)
    ended()
  }
  const pump = async () => {
    for (;;) {
      const rows = await journal.since(opts.actorId, sent)
      // Resumed after the final event: nothing more will come.
      if (lastStatus !== undefined && opts.isFinal(lastStatus)) return close()
      if (rows.length === 0 || closed) return
      const resource = await opts.read()
      if (closed) return
      for (const row of rows) {
        sent = row.seq
        const status = statusOf(row.stateValue)
        if (status === lastStatus) continue
        lastStatus = status
        out.write(`id: ${row.seq}\nevent: status\ndata: ${JSON.stringify(asOf(resource, status))}\n\n`)
        if (opts.isFinal(status)) return close()
      }
    }
  }
  // One read of the journal at a time; a wake-up during one asks for another pass after it.
  const wake = () => {
    if (closed) return
    if (running) {
      again = true
      return
    }
    running = pump()
      .catch(() => close())
      .finally(() => {
        running = undefined
        if (again && !closed) {
          again = false
          wake()
        }
      })
  }
  const off = journal.onCommit(opts.actorId, wake)
  const backstop = setInterval(wake, BACKSTOP_MS)
  const heartbeat = setInterval(() => out.write(': keep-alive\n\n'), HEARTBEAT_MS)
  wake()
  return { ended: endedPromise, stop: close }
}

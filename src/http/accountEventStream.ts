import { PassThrough } from 'node:stream'
import type { Context } from 'koa'
import type { AccountEventsStore, Watermark } from '../adapters/db/accountEvents.store.ts'

/** A comment line keeps proxies and idle timers from closing a quiet stream. */
const HEARTBEAT_MS = 15_000

/**
 * `GET /events`: the account's events as Server-Sent Events (`id:` the event id, `event:` its
 * type, `data:` `{ type, timestamp, data }`), oldest first, from the database (any node serves
 * it). `Last-Event-ID` resumes after that event; without it the stream starts now. An event is
 * sent once its number is settled (every transaction that could still commit a smaller one has
 * ended, checked with the snapshot taken when the number was read) and its data fixed by the
 * fan-out, so a stream never skips an event nor sends one twice.
 */
export async function streamAccountEvents(ctx: Context, events: AccountEventsStore, { accountId, pollMs }: { accountId: string; pollMs: number }): Promise<void> {
  const lastId = ctx.get('Last-Event-ID').trim()
  const start = await events.watermark()
  let sent = (lastId && (await events.seqOf(accountId, lastId))) || start.hi
  // Numbers read with their snapshot, waiting for the transactions running then to end.
  let pending: Watermark[] = [start]
  let settled = lastId ? '0' : start.hi

  const out = new PassThrough()
  ctx.req.socket.setTimeout(0)
  ctx.status = 200
  ctx.set({ 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-cache', 'X-Accel-Buffering': 'no' })
  ctx.body = out
  out.write(': stream of account events\n\n')

  let closed = false
  let busy = false
  const close = () => {
    if (closed) return
    closed = true
    clearInterval(poll)
    clearInterval(heartbeat)
    out.end()
  }
  const pump = async () => {
    const now = await events.watermark()
    pending.push(now)
    for (const w of pending) if (BigInt(w.xmax) <= BigInt(now.xmin) && BigInt(w.hi) > BigInt(settled)) settled = w.hi
    pending = pending.filter((w) => BigInt(w.xmax) > BigInt(now.xmin))
    for (;;) {
      if (closed || BigInt(settled) <= BigInt(sent)) return
      const rows = await events.after(accountId, sent, settled)
      if (rows.length === 0) {
        sent = settled
        return
      }
      for (const e of rows) {
        // Its data is fixed when it is fanned out: the stream waits for that, in order.
        if (!e.fanned) return
        sent = e.seq
        const body = { type: e.type, timestamp: new Date(e.created_at).toISOString(), data: e.data }
        out.write(`id: ${e.id}\nevent: ${e.type}\ndata: ${JSON.stringify(body)}\n\n`)
      }
    }
  }
  const tick = () => {
    if (busy || closed) return
    busy = true
    pump()
      .catch(() => close())
      .finally(() => (busy = false))
  }
  const poll = setInterval(tick, pollMs)
  const heartbeat = setInterval(() => out.write(': keep-alive\n\n'), HEARTBEAT_MS)
  ctx.res.on('close', close)
  out.on('error', close)
  tick()
}

import pg from 'pg'
import type { Logger } from './runtimeLogger.ts'
import { createKeyedListeners } from './keyedListeners.ts'

/** Postgres refuses a NOTIFY payload of 8,000 bytes or more. */
export const MAX_NOTIFY_PAYLOAD = 7_900

/**
 * Nudges between the service's nodes over Postgres `LISTEN`/`NOTIFY`: no engine beyond the
 * database the nodes already share. A nudge is only ever a hint (the row is the truth): one
 * lost while a node reconnects costs latency, so `onReconnect` tells the listeners to re-read
 * what they wait for. What one node publishes arrives in the order it was published: messages
 * go out in batches, one statement at a time, each numbered (Postgres would fold two equal
 * payloads of one transaction into one).
 *
 * @example
 * const bus = createNodeBus({ url, pool, logger })
 * // a database of several hosts: the listening connection comes from the caller, to the primary
 * const bus = createNodeBus({ url, pool, logger, newClient: () => new PrimaryClient() })
 * bus.subscribe('actor_commit', (ids) => reload(ids.split(',')))
 * await bus.start()
 * bus.publish('actor_commit', id)
 */
export function createNodeBus({
  url,
  pool,
  logger,
  retryMs = 1_000,
  newClient = () => new pg.Client({ connectionString: url }),
}: {
  url: string
  pool: pg.Pool
  logger: Logger
  retryMs?: number
  /** The listening connection, not yet connected (default: one to `url`). */
  newClient?: () => pg.Client
}) {
  const listeners = createKeyedListeners<string>()
  const reconnectListeners = new Set<() => void>()
  let client: pg.Client | undefined
  let stopped = true
  let retry: NodeJS.Timeout | undefined
  let failures = 0
  let seq = 0
  let queue: { channels: string[]; payloads: string[] } = { channels: [], payloads: [] }
  let sending = false
  // One statement at a time on the listening connection (pg refuses overlapping queries).
  let listening: Promise<unknown> = Promise.resolve()
  const listen = (c: pg.Client, channel: string) =>
    (listening = listening.then(() => c.query(`listen ${pg.escapeIdentifier(channel)}`)).catch((err: unknown) => logger.warn({ err: String(err), channel }, 'node bus listen failed')))

  async function flush(): Promise<void> {
    sending = true
    while (queue.channels.length > 0 && !stopped) {
      const batch = queue
      queue = { channels: [], payloads: [] }
      await pool
        .query('select pg_notify(c, p) from unnest($1::text[], $2::text[]) with ordinality as m(c, p, n) order by n', [batch.channels, batch.payloads])
        .catch((err: unknown) => logger.warn({ err: String(err) }, 'node bus publish failed'))
    }
    sending = false
  }

  async function connect(): Promise<void> {
    const c = newClient()
    c.on('notification', (msg) => {
      const numbered = msg.payload ?? ''
      listeners.emit(msg.channel, numbered.slice(numbered.indexOf(':') + 1))
    })
    c.on('error', (err) => logger.warn({ err: err.message }, 'node bus connection failed; reconnecting'))
    c.on('end', () => {
      if (client === c) client = undefined
      scheduleReconnect()
    })
    await c.connect()
    for (const channel of listeners.keys()) await listen(c, channel)
    client = c
  }

  async function reconnect(): Promise<void> {
    if (stopped) return
    try {
      await connect()
      failures = 0
      for (const l of reconnectListeners) l()
    } catch (err) {
      failures++
      logger.warn({ err: String(err), failures }, 'node bus not reconnected; trying again')
      scheduleReconnect()
    }
  }

  // One pending attempt at a time (a failed connect ends its client too: both would schedule
  // one), each after twice the last wait, up to 10 retryMs, while the database stays away.
  function scheduleReconnect(): void {
    if (stopped) return
    clearTimeout(retry)
    retry = setTimeout(() => void reconnect(), Math.min(retryMs * 2 ** failures, retryMs * 10))
  }

  return {
    /** Sends `payload` (under MAX_NOTIFY_PAYLOAD bytes) to every node listening on `channel`, this one too. Never throws. */
    publish(channel: string, payload: string): void {
      if (stopped) return
      queue.channels.push(channel)
      queue.payloads.push(`${(seq++).toString(36)}:${payload}`)
      if (!sending) void flush()
    },
    /** Listens on `channel` (subscribe before `start`; later channels are listened on at once). Returns the unsubscribe. */
    subscribe(channel: string, listener: (payload: string) => void): () => void {
      if (!listeners.has(channel) && client) void listen(client, channel)
      return listeners.on(channel, listener)
    },
    /** Calls `listener` after the connection was lost and made again (nudges may have been missed). */
    onReconnect(listener: () => void): () => void {
      reconnectListeners.add(listener)
      return () => void reconnectListeners.delete(listener)
    },
    async start(): Promise<void> {
      stopped = false
      await connect()
    },
    async stop(): Promise<void> {
      stopped = true
      clearTimeout(retry)
      const c = client
      client = undefined
      await c?.end().catch(() => {})
    },
  }
}

export type NodeBus = ReturnType<typeof createNodeBus>

import { randomUUID } from 'node:crypto'
import type pg from 'pg'
import type { Logger } from '../../logger.ts'
import { createPoller } from '../../actors/runtime/index.ts'
import { createWebhooksStore, type AccountEventRow } from '../db/webhooks.store.ts'
import { createWebhookDeliveriesStore, type ClaimedDelivery } from '../db/webhookDeliveries.store.ts'
import { sendWebhook } from './send.ts'
import { pruneAccountEvents } from '../db/eventRetention.store.ts'
import type { TargetPolicy } from './target.ts'

export type WebhookSettings = {
  policy: TargetPolicy
  /** One request's limit. */
  timeoutMs: number
  /** Backoff: `baseMs * 2^(attempt-1)`, at most `maxDelayMs`, with jitter (50-100 % of it). */
  retryBaseMs: number
  maxDelayMs: number
  /** How long a delivery is retried before it is `dead`. */
  retryWindowMs: number
  /** An endpoint failing this long is disabled. */
  disableAfterMs: number
  pollMs: number
  /** Account events (and their deliveries) older than this are deleted, every `retentionSweepMs`. */
  retentionHours: number
  retentionSweepMs: number
  /** Deliveries in flight at once, per node and per endpoint. */
  concurrency: number
  perEndpoint: number
}

/** The resource an event is about, as the API shows it (undefined: the event's recorded detail). */
/** The data of a batch of events, in order (undefined: render it from the event's record). */
export type EventRenderer = (events: readonly AccountEventRow[]) => Promise<unknown[]>

/** The delay before retry `attempt` + 1. */
export function retryDelayMs(attempt: number, s: Pick<WebhookSettings, 'retryBaseMs' | 'maxDelayMs'>, random = Math.random): number {
  const full = Math.min(s.maxDelayMs, s.retryBaseMs * 2 ** Math.min(30, Math.max(0, attempt - 1)))
  return Math.round(full * (0.5 + random() * 0.5))
}

/**
 * Fans account events out to the endpoints that want them, and sends the deliveries: claimed in
 * batches under a lease (SKIP LOCKED, so nodes share the work), each sent on its own (a slow
 * endpoint holds only its own deliveries, at most `perEndpoint` at once), recorded by the lease
 * holder. At least once: a node that dies mid-request leaves the lease to expire and the
 * delivery is sent again, under the same `webhook-id`.
 *
 * @example
 * const dispatcher = createWebhookDispatcher({ pool, logger, settings, render })
 * await dispatcher.start()
 */
export function createWebhookDispatcher({ pool, logger, settings, render }: { pool: pg.Pool; logger: Logger; settings: WebhookSettings; render: EventRenderer }) {
  const events = createWebhooksStore(pool)
  const deliveries = createWebhookDeliveriesStore(pool)
  const owner = `webhooks-${randomUUID()}`
  const inFlight = new Map<string, number>()
  const running = new Set<Promise<void>>()
  // A request ends within its timeout: a lease outlives it by the time to record the outcome.
  const leaseMs = settings.timeoutMs + 5000

  async function fanOutEvents(): Promise<number> {
    const batch = await events.unfannedEvents(100)
    // The events without data rendered together (a batch's runs in one read).
    const bare = batch.filter((e) => e.data === null || e.data === undefined)
    const data = new Map<string, unknown>()
    if (bare.length > 0) (await render(bare)).forEach((d, i) => data.set(bare[i]!.seq, d))
    const rendered = batch.map((e) => ({ seq: e.seq, data: e.data ?? data.get(e.seq) ?? { id: e.resource_id, ...e.detail } }))
    // The whole batch's data and deliveries in one statement.
    await events.fanOut(rendered)
    return batch.length
  }

  async function deliver(d: ClaimedDelivery): Promise<void> {
    const secrets = d.previous_secret ? [d.secret, d.previous_secret] : [d.secret]
    const sent = await sendWebhook(d.url, { id: d.id, type: d.type, timestamp: new Date(d.event_at).toISOString(), data: d.data }, {
      secrets, policy: settings.policy, timeoutMs: settings.timeoutMs, trace: d.trace,
    })
    if (sent.ok) {
      await deliveries.delivered({ id: d.id, owner, statusCode: sent.statusCode!, latencyMs: sent.latencyMs })
      return
    }
    const disabled = await deliveries.failed({
      id: d.id, owner, statusCode: sent.statusCode, latencyMs: sent.latencyMs, error: sent.error ?? 'failed',
      delayMs: retryDelayMs(d.attempts, settings), retryWindowMs: settings.retryWindowMs, disableAfterMs: settings.disableAfterMs,
    })
    if (disabled) {
      logger.warn({ endpointId: disabled.id }, 'webhook endpoint disabled after failing')
      await events.insertEvent({
        id: `evt_disabled_${disabled.id}_${Date.now()}`, accountId: disabled.account_id, type: 'webhook.disabled',
        data: { id: disabled.id, url: disabled.url, enabled: false, reason: 'failing' }, exceptEndpoint: disabled.id,
      })
    }
  }

  function track(d: ClaimedDelivery) {
    inFlight.set(d.endpoint_id, (inFlight.get(d.endpoint_id) ?? 0) + 1)
    const p = deliver(d)
      .catch((err: unknown) => logger.error({ err, deliveryId: d.id }, 'webhook delivery not recorded'))
      .finally(() => {
        const n = (inFlight.get(d.endpoint_id) ?? 1) - 1
        if (n <= 0) inFlight.delete(d.endpoint_id)
        else inFlight.set(d.endpoint_id, n)
        running.delete(p)
        poller.wake(0)
      })
    running.add(p)
  }

  async function poll(): Promise<number | undefined> {
    await fanOutEvents()
    const free = settings.concurrency - running.size
    if (free > 0) {
      const busy = [...inFlight].filter(([, n]) => n >= settings.perEndpoint).map(([id]) => id)
      const claimed = await deliveries.claim({ owner, leaseMs, limit: free, perEndpoint: settings.perEndpoint, busyEndpoints: busy })
      claimed.forEach(track)
    }
    return deliveries.nextDueInMs()
  }

  const poller = createPoller({ pollMs: settings.pollMs, logger, poll })
  // Retention: batches of 1,000 until none is due (at most 20 a sweep, the rest at the next one).
  let sweeper: NodeJS.Timeout | undefined
  const sweep = async () => {
    for (let pass = 0; pass < 20; pass++) {
      if ((await pruneAccountEvents(pool, { retentionHours: settings.retentionHours, limit: 1000 })) < 1000) return
    }
  }
  const sweepSoon = () => {
    sweeper = setTimeout(() => void sweep().catch((err: unknown) => logger.warn({ err: String(err) }, 'account event retention sweep failed')).finally(() => {
      if (sweeper) sweepSoon()
    }), settings.retentionSweepMs).unref()
  }
  return {
    start: async () => {
      await poller.start()
      sweepSoon()
    },
    /** Polls now (an event was just recorded, a delivery asked for again). */
    wake: () => poller.wake(0),
    async stop() {
      clearTimeout(sweeper)
      sweeper = undefined
      poller.stop()
      await Promise.allSettled([...running])
    },
  }
}

export type WebhookDispatcher = ReturnType<typeof createWebhookDispatcher>

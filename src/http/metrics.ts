import type { Middleware } from 'koa'
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client'
import type { Core } from '../app/coreApi.ts'

/**
 * Prometheus metrics: process defaults, HTTP requests by route and status, and the number of
 * actors per kind and state (read from Postgres at scrape time, so every node reports the same).
 *
 * @example
 * const metrics = createMetrics(core.metricsCounts)
 * app.use(metrics.middleware)
 * // GET /metrics (operator key) -> await metrics.render()
 */
export function createMetrics(counts: Core['metricsCounts']) {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry })
  const requests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests by route, method and status.',
    labelNames: ['route', 'method', 'status'],
    registers: [registry],
  })
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request duration by route and method.',
    labelNames: ['route', 'method'],
    buckets: [0.001, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
    registers: [registry],
  })
  new Gauge({
    name: 'actors',
    help: 'Actors per kind and state.',
    labelNames: ['kind', 'status'],
    registers: [registry],
    async collect() {
      this.reset()
      for (const r of await counts.actors()) this.set({ kind: r.kind, status: r.status }, r.n)
    },
  })
  new Gauge({
    name: 'effects_open',
    help: 'Effects not yet finished (pending, prepared or sent).',
    registers: [registry],
    async collect() {
      this.set(await counts.openEffects())
    },
  })
  // One read of the storage figures per scrape, shared by its three gauges (collected together).
  let read: ReturnType<typeof counts.storage> | undefined
  const storage = () => (read ??= counts.storage().finally(() => (read = undefined)))
  new Gauge({
    name: 'database_bytes',
    help: "The database's size in bytes.",
    registers: [registry],
    async collect() {
      this.set((await storage()).databaseBytes)
    },
  })
  new Gauge({
    name: 'database_growth_last_hour_bytes',
    help: "The database's growth over the last hour, in bytes (NaN until the service has sampled its size an hour ago).",
    registers: [registry],
    async collect() {
      // NaN until the size was sampled an hour ago (a gauge without labels always has a sample).
      this.set((await storage()).growthLastHourBytes ?? Number.NaN)
    },
  })
  new Gauge({
    name: 'actor_compaction_backlog',
    help: 'Ended actors past their retention window not compacted yet.',
    registers: [registry],
    async collect() {
      this.set((await storage()).compactionBacklog)
    },
  })
  new Gauge({
    name: 'chain_transactions_unconfirmed',
    help: 'Outbox transactions queued or broadcast, not yet confirmed.',
    registers: [registry],
    async collect() {
      this.set(await counts.unconfirmedTransactions())
    },
  })

  const middleware: Middleware = async (ctx, next) => {
    const end = duration.startTimer()
    try {
      await next()
    } finally {
      // The route's pattern, never the raw path (ids would explode the label set).
      const route = (ctx as { _matchedRoute?: string })._matchedRoute ?? 'unmatched'
      end({ route, method: ctx.method })
      requests.inc({ route, method: ctx.method, status: String(ctx.status) })
    }
  }

  return { middleware, render: () => registry.metrics(), contentType: registry.contentType }
}

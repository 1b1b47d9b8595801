import { register } from 'node:module'
import type { TracingConfig } from './config.ts'

/**
 * OpenTelemetry's SDK, started by src/main.ts only when tracing is on (an OTEL_* variable is set,
 * src/config.ts) and before src/boot.ts is imported: the instrumentations of `http`, `koa` and
 * `pg` patch those modules as they load, so they must be in place first. With tracing off this
 * file is never imported, and the spans of the service's own code (model calls, transactions,
 * webhook deliveries, the HTTP answer's `traceparent`) go to `@opentelemetry/api`'s no-op tracer.
 *
 * Spans leave in batches over OTLP/HTTP, as `http/protobuf` or `http/json`
 * (OTEL_EXPORTER_OTLP_PROTOCOL). Returns a flush-and-stop for the process's exit.
 */
export async function startTracing(config: TracingConfig): Promise<() => Promise<void>> {
  // ESM imports are hooked by import-in-the-middle, for the instrumented packages only (the
  // service's own TypeScript files are left to Node's loader as they are).
  register('@opentelemetry/instrumentation/hook.mjs', import.meta.url, { data: { include: ['koa', 'pg', 'pg-pool', 'http', 'node:http'] } })
  const [provider, { registerInstrumentations }, { HttpInstrumentation }, { KoaInstrumentation, KoaLayerType }, { PgInstrumentation }] = await Promise.all([
    createTracerProvider(config),
    import('@opentelemetry/instrumentation'),
    import('@opentelemetry/instrumentation-http'),
    import('@opentelemetry/instrumentation-koa'),
    import('@opentelemetry/instrumentation-pg'),
  ])
  // W3C trace context in and out (the default propagator), AsyncLocalStorage for the active span.
  provider.register()
  registerInstrumentations({
    tracerProvider: provider,
    instrumentations: [
      // The collector's own requests (the exporter's) are not traced.
      new HttpInstrumentation({ ignoreOutgoingRequestHook: (req) => requestUrl(req) === config.url }),
      // The routers' layers only (the route's span): a span per middleware would be some twenty a request.
      new KoaInstrumentation({ ignoreLayersType: [KoaLayerType.MIDDLEWARE] }),
      new PgInstrumentation({ requireParentSpan: true }),
    ],
  })
  return async () => {
    await provider.shutdown().catch(() => {})
  }
}

/**
 * The tracer provider alone: `service.name`, a batch processor and the OTLP/HTTP exporter of the
 * configured protocol. Tests that run the service in their own process register it themselves.
 */
export async function createTracerProvider(config: TracingConfig, { delayMs = 1000 } = {}) {
  const [{ NodeTracerProvider, BatchSpanProcessor }, { resourceFromAttributes }] = await Promise.all([
    import('@opentelemetry/sdk-trace-node'),
    import('@opentelemetry/resources'),
  ])
  const exporterOptions = { url: config.url, headers: config.headers }
  const exporter = config.protocol === 'http/json'
    ? new (await import('@opentelemetry/exporter-trace-otlp-http')).OTLPTraceExporter(exporterOptions)
    : new (await import('@opentelemetry/exporter-trace-otlp-proto')).OTLPTraceExporter(exporterOptions)
  return new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': config.serviceName }),
    spanProcessors: [new BatchSpanProcessor(exporter, { scheduledDelayMillis: delayMs })],
  })
}

function requestUrl(req: { protocol?: string | null; hostname?: string | null; host?: string | null; port?: string | number | null; path?: string | null }): string {
  const host = req.hostname ?? req.host ?? ''
  return `${req.protocol ?? 'http:'}//${host}${req.port ? `:${req.port}` : ''}${req.path ?? ''}`
}

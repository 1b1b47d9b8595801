import { randomBytes } from 'node:crypto'
import { context, isSpanContextValid, propagation, SpanKind, SpanStatusCode, trace, type Span, type SpanContext } from '@opentelemetry/api'
import type { Context, Middleware } from 'koa'

/** Asked for at each use, not kept: a provider registered later (or again, in tests) is the one used. */
const tracer = () => trace.getTracer('agent-launch-trading-service/http')

/**
 * Every answer carries a W3C `traceparent` (docs/operations.md, Traces). With tracing on, it
 * names the request's server span: the `http` instrumentation's when it made one, else a span
 * made here as the child of an incoming `traceparent`; the request's work runs inside it, so the
 * runtime stores it with what the request starts and its effects continue the trace. With tracing
 * off, it is generated anyway: the incoming trace id (or a fresh one), a fresh span id and the
 * incoming flags (or `00`, not sampled: nothing of it was recorded here), so a caller always has
 * an id to quote.
 */
export function traceContext(): Middleware {
  return async (ctx, next) => {
    const active = trace.getActiveSpan()
    if (active?.isRecording()) {
      ctx.set('traceparent', traceparentOf(active.spanContext()))
      await next()
      named(active, ctx)
      return
    }
    const parent = propagation.extract(context.active(), ctx.headers)
    const parentSc = trace.getSpanContext(parent)
    const span = tracer().startSpan(ctx.method, { kind: SpanKind.SERVER, attributes: { 'http.request.method': ctx.method, 'url.path': ctx.path } }, parent)
    if (!span.isRecording()) {
      // Off: no propagator is registered either, so the incoming header is read here.
      const incoming = parentSc && isSpanContextValid(parentSc) ? { traceId: parentSc.traceId, flags: flags(parentSc.traceFlags) } : parseTraceparent(ctx.get('traceparent'))
      ctx.set('traceparent', `00-${incoming?.traceId ?? randomBytes(16).toString('hex')}-${randomBytes(8).toString('hex')}-${incoming?.flags ?? '00'}`)
      return next()
    }
    ctx.set('traceparent', traceparentOf(span.spanContext()))
    try {
      await context.with(trace.setSpan(parent, span), next)
    } finally {
      named(span, ctx)
      span.setAttribute('http.response.status_code', ctx.status)
      if (ctx.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR })
      span.end()
    }
  }
}

/** The server span named by the route's pattern once the router matched it (never the raw path). */
function named(span: Span, ctx: Context): void {
  const route = (ctx as { _matchedRoute?: unknown })._matchedRoute
  if (typeof route === 'string') span.updateName(`${ctx.method} ${route}`).setAttribute('http.route', route)
}

export function traceparentOf(sc: SpanContext): string {
  return `00-${sc.traceId}-${sc.spanId}-${flags(sc.traceFlags)}`
}

/** A W3C traceparent's trace id and flags (version 00, or a later one read as 00), else undefined. */
function parseTraceparent(header: string): { traceId: string; flags: string } | undefined {
  const m = TRACEPARENT.exec(header.trim().toLowerCase())
  if (!m || m[1] === 'ff' || (m[1] === '00' && m[5] !== undefined) || /^0+$/.test(m[2]!) || /^0+$/.test(m[3]!)) return undefined
  return { traceId: m[2]!, flags: m[4]! }
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/

const flags = (f: number) => (f & 0xff).toString(16).padStart(2, '0')

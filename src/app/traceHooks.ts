import { context, isSpanContextValid, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, TraceFlags } from '@opentelemetry/api'
import type { TraceHooks } from '../actors/runtime/index.ts'

/** Asked for at each use, not kept: a provider registered later (or again, in tests) is the one used. */
const tracer = () => trace.getTracer('agent-launch-trading-service/runtime')
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/

/**
 * The runtime's trace hooks over OpenTelemetry (docs/operations.md, Traces): the trace context the
 * runtime stores with effect and inbox rows is the active span's W3C traceparent, and an effect
 * (or an inbox row's application) runs in a span that is the child of the one stored with it, on
 * whichever node claims it, whenever it does. With tracing off there is no active span: nothing
 * is stored, and the spans are the no-op API's.
 */
export const traceHooks: TraceHooks = {
  current() {
    const sc = trace.getActiveSpan()?.spanContext()
    return sc && isSpanContextValid(sc) ? `00-${sc.traceId}-${sc.spanId}-${sc.traceFlags & TraceFlags.SAMPLED ? '01' : '00'}` : null
  },
  within(stored, name, attributes, fn) {
    const m = stored ? TRACEPARENT.exec(stored) : null
    // Without a stored context, a trace of its own: never the one of whatever woke the poll.
    const parent = m ? trace.setSpanContext(ROOT_CONTEXT, { traceId: m[1]!, spanId: m[2]!, traceFlags: parseInt(m[3]!, 16), isRemote: true }) : ROOT_CONTEXT
    return tracer().startActiveSpan(name, { kind: SpanKind.INTERNAL, attributes }, parent, async (span) => {
      try {
        return await fn()
      } catch (err) {
        span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message.slice(0, 200) : String(err) })
        throw err
      } finally {
        span.end()
      }
    })
  },
}

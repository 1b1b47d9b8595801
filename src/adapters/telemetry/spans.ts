import { SpanKind, SpanStatusCode, trace, type Attributes, type Span } from '@opentelemetry/api'

/**
 * The service's own spans (docs/operations.md, Traces): model calls, chain transactions, webhook
 * deliveries. Over `@opentelemetry/api` only: with tracing off (src/tracing.ts never loaded) its
 * tracer is the no-op one and a span costs an object and nothing else. The tracer is asked for
 * at each use, not kept: a provider registered later (or again, in tests) is the one used.
 */
const tracer = () => trace.getTracer('agent-launch-trading-service')

/**
 * Runs `fn` inside a span (the active one while it runs, so spans and statements started inside
 * are its children); `fn` may add attributes once it knows them. A throw marks the span an error
 * (`error.type`, the exception recorded) and is rethrown.
 *
 * @example
 * const receipt = await inSpan('chain.tx.receipt', { 'tx.id': id }, async (span) => { ... })
 */
export function inSpan<T>(name: string, attributes: Attributes, fn: (span: Span) => Promise<T>, kind: SpanKind = SpanKind.CLIENT): Promise<T> {
  return tracer().startActiveSpan(name, { kind, attributes }, async (span) => {
    try {
      return await fn(span)
    } catch (err) {
      failed(span, err)
      throw err
    } finally {
      span.end()
    }
  })
}

/** A span started now and ended by the caller (a stream's span lasts as long as its iteration). */
export function startSpan(name: string, attributes: Attributes, kind: SpanKind = SpanKind.CLIENT): Span {
  return tracer().startSpan(name, { kind, attributes })
}

export function failed(span: Span, err: unknown): void {
  if (!span.isRecording()) return
  span.setAttribute('error.type', err instanceof Error ? ((err as { code?: unknown }).code as string | undefined) ?? err.name : 'error')
  if (err instanceof Error) span.recordException(err)
  span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message.slice(0, 200) : String(err) })
}

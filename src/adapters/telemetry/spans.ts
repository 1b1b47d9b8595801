import { context, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span } from '@opentelemetry/api'

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

/**
 * A span started now and ended by the caller (a stream's span lasts as long as its iteration).
 * `parent`: a stored W3C traceparent to start it under (work that a durable row carried from
 * another trace), instead of the active span; one that is null or not a traceparent starts a trace of its own.
 */
export function startSpan(name: string, attributes: Attributes, kind: SpanKind = SpanKind.CLIENT, parent?: string | null): Span {
  return tracer().startSpan(name, { kind, attributes }, parent === undefined ? context.active() : storedContext(parent))
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/

/** The context of a stored W3C traceparent (its span as a remote parent), else the root context. */
function storedContext(traceparent: string | null): Context {
  const m = traceparent ? TRACEPARENT.exec(traceparent) : null
  return m ? trace.setSpanContext(ROOT_CONTEXT, { traceId: m[1]!, spanId: m[2]!, traceFlags: parseInt(m[3]!, 16), isRemote: true }) : ROOT_CONTEXT
}

export function failed(span: Span, err: unknown): void {
  if (!span.isRecording()) return
  span.setAttribute('error.type', err instanceof Error ? ((err as { code?: unknown }).code as string | undefined) ?? err.name : 'error')
  if (err instanceof Error) span.recordException(err)
  span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message.slice(0, 200) : String(err) })
}

/**
 * One tool call (a model's, a chat turn's or a run's; an automation's firing), as the GenAI
 * semantic conventions name it: `execute_tool <name>` with `gen_ai.operation.name`,
 * `gen_ai.tool.name`, `gen_ai.tool.call.id` and `gen_ai.tool.type`. A tool that refused (the
 * outcome `fn` answers with `ok: false`) marks the span an error with the refusal's code.
 */
export function inToolSpan<T extends { ok: boolean; error?: { code: string; error: string } }>(name: string, callId: string, fn: () => Promise<T>): Promise<T> {
  const attributes = { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': name, 'gen_ai.tool.call.id': callId, 'gen_ai.tool.type': 'function' }
  return inSpan(`execute_tool ${name}`, attributes, async (span) => {
    const outcome = await fn()
    if (!outcome.ok && span.isRecording()) {
      span.setAttribute('error.type', outcome.error?.code ?? 'refused')
      span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.error?.error.slice(0, 200) ?? 'refused' })
    }
    return outcome
  }, SpanKind.INTERNAL)
}

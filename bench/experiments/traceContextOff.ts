/**
 * What the `traceparent` middleware costs a request with tracing off (docs/operations.md,
 * Traces): `traceContext()` (src/http/middleware/traceContext.ts) called in a loop on a minimal
 * Koa-shaped context, no OpenTelemetry SDK registered (the no-op API, as the service runs without
 * OTEL_*): the active span's look, the no-op tracer's span, the incoming header's parse and a
 * fresh trace and span id. Beside it, an empty `await` (the loop's own cost).
 *
 *   node bench/experiments/traceContextOff.ts
 */
import { traceContext } from '../../src/http/middleware/traceContext.ts'

const N = Number(process.env.BENCH_N ?? 200_000)
const mw = traceContext()
const headers: Record<string, string> = { host: '127.0.0.1', authorization: 'Bearer k' }
const ctx = { method: 'GET', path: '/api/v1/agents/x', headers, get: (h: string) => headers[h] ?? '', set: (_k: string, _v: string) => {} }
const next = async () => {}
const call = mw as unknown as (c: typeof ctx, n: typeof next) => Promise<void>

async function perCall(f: () => Promise<void>): Promise<number> {
  const t0 = performance.now()
  for (let i = 0; i < N; i++) await f()
  return ((performance.now() - t0) * 1000) / N
}

for (let i = 0; i < 20_000; i++) await call(ctx, next)
const off = await perCall(() => call(ctx, next))
const empty = await perCall(next)
process.stdout.write(`traceContext, tracing off: ${off.toFixed(2)} µs per request (an empty await: ${empty.toFixed(2)} µs), ${N} calls\n`)
process.stdout.write(`${JSON.stringify({ n: N, offUs: Number(off.toFixed(2)), emptyAwaitUs: Number(empty.toFixed(2)) })}\n`)

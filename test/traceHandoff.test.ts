import { randomUUID } from 'node:crypto'
import { context, propagation, trace } from '@opentelemetry/api'
import { InMemorySpanExporter, NodeTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-node'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { setup, type AnyEventObject } from 'xstate'
import { createLogger } from '../src/logger.ts'
import { createActorRuntime } from '../src/actors/runtime/actorRuntime.ts'
import type { ActorKind } from '../src/actors/runtime/actorKind.ts'
import { traceHooks } from '../src/app/traceHooks.ts'
import { useMigratedDatabase } from './support/db.ts'
import { waitFor } from './support/waitFor.ts'

/** One effect (`hop.work`) that reports `hop.done`. */
const hopKind: ActorKind = {
  kind: 'hop',
  machine: setup({ types: { events: {} as { type: 'hop.run' } | { type: 'hop.done'; effectId: string } }, actions: { 'hop.work': () => {} } }).createMachine({
    id: 'hop',
    initial: 'idle',
    states: { idle: { on: { 'hop.run': 'working' } }, working: { entry: 'hop.work', on: { 'hop.done': 'done' } }, done: { type: 'final' } },
  }),
  machineVersion: 1,
  parseEvent: (e) => e as AnyEventObject,
  statusOf: (s) => String(s.value),
  effects: ['hop.work'],
}

const logger = createLogger({ level: 'silent' })
const db = useMigratedDatabase()
const exporter = new InMemorySpanExporter()
const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })

beforeAll(() => {
  provider.register()
})
afterAll(async () => {
  await provider.shutdown()
  trace.disable()
  context.disable()
  propagation.disable()
})

describe("an effect taken over by another node continues the trace of the request that caused it", () => {
  it('node A commits the effect in a request and dies holding it; node B runs it later, in the same trace', async () => {
    const seen: Array<{ node: string; traceId: string | undefined }> = []
    const hang = new Promise<never>(() => {})
    const ra = createActorRuntime({
      pool: db().pool, kinds: [hopKind], logger, nodeId: 'node-a', effectLeaseMs: 400, pollMs: 60_000, trace: traceHooks,
      effectHandlers: { 'hop.work': async () => (seen.push({ node: 'a', traceId: trace.getActiveSpan()?.spanContext().traceId }), hang) },
    })
    await ra.start()
    const id = randomUUID()
    await ra.create('hop', { id, accountId: randomUUID(), input: {} })
    // The request: its span is active while the command is committed.
    const requestTraceId = await trace.getTracer('test').startActiveSpan('POST /hops', async (span) => {
      await ra.send(id, { type: 'hop.run' })
      span.end()
      return span.spanContext().traceId
    })
    await waitFor(() => seen.length === 1)
    void ra.stop() // A stops renewing its lease; its handler never returns
    const stored = (await db().pool.query<{ trace: string }>('select trace from effect where actor_id = $1', [id])).rows
    expect(stored).toEqual([{ trace: expect.stringMatching(new RegExp(`^00-${requestTraceId}-[0-9a-f]{16}-01$`)) }])

    // Node B starts outside any request (no active span here): only the row carries the trace.
    expect(trace.getActiveSpan()).toBeUndefined()
    const rb = createActorRuntime({
      pool: db().pool, kinds: [hopKind], logger, nodeId: 'node-b', pollMs: 30, shardLeaseMs: 600, trace: traceHooks,
      effectHandlers: { 'hop.work': async () => (seen.push({ node: 'b', traceId: trace.getActiveSpan()?.spanContext().traceId }), { type: 'hop.done' }) },
    })
    await rb.start()
    await waitFor(async () => (await db().pool.query('select status from actor where id = $1', [id])).rows[0]?.status === 'done', 15_000)
    expect(seen).toEqual([{ node: 'a', traceId: requestTraceId }, { node: 'b', traceId: requestTraceId }])
    const effectSpans = exporter.getFinishedSpans().filter((s) => s.name === 'effect hop.work' && s.attributes['actor.id'] === id)
    // A's span never ended (its handler hangs); B's did, in the request's trace, naming node B.
    expect(effectSpans.map((s) => [s.spanContext().traceId, s.attributes['node.id']])).toEqual([[requestTraceId, 'node-b']])
    await rb.stop()
  })
})

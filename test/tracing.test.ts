import { context, propagation, trace } from '@opentelemetry/api'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTracerProvider } from '../src/tracing.ts'
import { startTestApp, type Api, type TestApp } from './support/app.ts'
import { startModelServer, type ModelServer } from './support/modelServer.ts'
import { startOtlpReceiver, type ReceivedSpan } from './support/otlpReceiver.ts'
import { automationUntil } from './support/automations.ts'
import { startReceiver } from './support/webhookReceiver.ts'
import { waitFor } from './support/waitFor.ts'

// Tracing on, in this process: the SDK's provider exporting http/json to a local OTLP receiver.
// The http/koa/pg instrumentations patch modules as Node loads them (src/tracing.ts); this
// process loaded them before, so the request's span here is the service's own (traceContext).
let receiver: Awaited<ReturnType<typeof startOtlpReceiver>>
let provider: Awaited<ReturnType<typeof createTracerProvider>>
let model: ModelServer
let app: TestApp
let api: Api
let agent: string

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/

beforeAll(async () => {
  receiver = await startOtlpReceiver()
  provider = await createTracerProvider({ url: `${receiver.endpoint}/v1/traces`, protocol: 'http/json', serviceName: 'alts-test', headers: {} }, { delayMs: 50 })
  provider.register()
  model = await startModelServer()
  app = await startTestApp({ OPENAI_BASE_URL: model.baseUrl, OPENAI_API_KEY: 'test-key', AUTOMATION_MIN_INTERVAL_SECONDS: '1', WEBHOOK_POLL_MS: '50' }, { withChain: true })
  ;({ api } = await app.account())
  agent = (await api('POST', '/agents', { name: 'traced', skills: ['trading'], system_prompt: 'Trade carefully.' })).body.id
  expect((await api('POST', '/dev/faucet', { agentId: agent, eth: '5' })).status).toBe(200)
})
afterAll(async () => {
  await app?.close()
  await model?.stop()
  await provider?.shutdown()
  // The rest of this worker's files run with tracing off, as the service does without OTEL_*.
  trace.disable()
  context.disable()
  propagation.disable()
  await receiver?.close()
})

/** The spans of one trace once `names` are all in it (spans leave in batches). */
async function traceOf(traceId: string, names: Array<string | RegExp>): Promise<ReceivedSpan[]> {
  const spans = () => receiver.spans.filter((s) => s.traceId === traceId)
  await waitFor(() => names.every((n) => spans().some((s) => (typeof n === 'string' ? s.name === n : n.test(s.name)))), 30_000).catch(() => {})
  return spans()
}

describe('traces across the durable boundary (a local OTLP/HTTP receiver, http/json)', () => {
  it('a swap over HTTP: one trace holds the request, the signing and the receipt', async () => {
    const res = await api('POST', '/swap/execute', { agentId: agent, tokenIn: 'ETH', tokenOut: 'USDC', amountIn: '0.01', slippageBps: 100 }, { 'Prefer': 'wait=30' })
    expect([200, 202]).toContain(res.status)
    const [, traceId] = res.headers.get('traceparent')!.match(TRACEPARENT)!
    const spans = await traceOf(traceId!, ['POST /api/v1/swap/execute', 'chain.tx.sign', 'chain.tx.receipt'])
    const names = spans.map((s) => s.name)
    expect(names).toContain('POST /api/v1/swap/execute')
    const sign = spans.find((s) => s.name === 'chain.tx.sign')!
    const receipt = spans.find((s) => s.name === 'chain.tx.receipt')!
    expect(sign, names.join(', ')).toBeDefined()
    expect(receipt, names.join(', ')).toBeDefined()
    const hash = (sign.attributes['chain.tx.hash'] as string[]).at(-1)
    expect(hash).toMatch(/^0x[0-9a-f]{64}$/)
    expect(receipt.attributes['chain.tx.hash']).toContain(hash)
    expect((receipt.attributes['chain.tx.gas_used'] as number[])[0]).toBeGreaterThan(21_000)
    expect((receipt.attributes['chain.tx.block_number'] as number[])[0]).toBeGreaterThan(0)
    // The effect ran in a span of its own, a child in the request's trace, naming the node that ran it.
    const effect = spans.find((s) => s.name.startsWith('effect '))
    expect(effect, names.join(', ')).toBeDefined()
    expect(effect!.attributes['node.id']).toEqual(expect.any(String))
    expect([sign.parentSpanId, receipt.parentSpanId]).toContain(effect!.spanId)
    // What the runtime stored: each effect row of the swap carries the request's trace.
    const stored = (await app.services.pool.query<{ trace: string | null }>(`select trace from effect where actor_id = $1`, [res.body.id])).rows
    expect(stored.length).toBeGreaterThan(0)
    for (const r of stored) expect(r.trace).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`))
    const row = (await app.services.pool.query(`select hash, nonce::int as nonce from chain_tx where hash = $1`, [hash])).rows[0]
    expect(row).toBeDefined()
    expect(sign.attributes['chain.tx.nonce']).toContain(row.nonce)

    // The console's timeline of the swap names its trace: each transition (the request's, the
    // effects' outcomes) and each effect, as the operator reads it.
    const op = await app.account({ operator: true, name: 'ops' })
    const timeline = (await op.api('GET', `/ops/actors/${res.body.id}/timeline`)).body.timeline as Array<{ type: string; traceId: string | null }>
    const traced = timeline.filter((e) => e.type === 'event' || e.type === 'effect')
    expect(traced.filter((e) => e.type === 'effect').length).toBeGreaterThan(0)
    expect(new Set(traced.map((e) => e.traceId))).toEqual(new Set([traceId]))
  })

  it('a chat turn: one trace holds the request and each model call with its GenAI attributes', async () => {
    model.mock.on({ userMessage: 'trace me', hasToolResult: false }, { toolCalls: [{ id: 'call_q', name: 'get_portfolio', arguments: '{}' }], usage: { prompt_tokens: 900, completion_tokens: 40 } })
    model.mock.onToolResult('call_q', { content: 'You hold ETH.', usage: { prompt_tokens: 1200, completion_tokens: 12 } })
    const res = await api('POST', `/agents/${agent}/chat`, { message: 'trace me' })
    expect(res.status).toBe(200)
    const [, traceId] = res.headers.get('traceparent')!.match(TRACEPARENT)!
    const spans = await traceOf(traceId!, ['POST /api/v1/agents/:id/chat', 'chat gpt-4o-mini'])
    expect(spans.map((s) => s.name)).toContain('POST /api/v1/agents/:id/chat')
    const calls = spans.filter((s) => s.name.startsWith('chat '))
    expect(calls.map((c) => [c.attributes['gen_ai.usage.input_tokens'], c.attributes['gen_ai.usage.output_tokens']]), spans.map((s) => s.name).join(', ')).toEqual([[900, 40], [1200, 12]])
    for (const c of calls) expect(c.attributes).toMatchObject({ 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'gpt-4o-mini', 'gen_ai.response.model': 'gpt-4o-mini' })
    // The tool call between them, in the same trace: its span inside the tool-call effect's.
    const traced = await traceOf(traceId!, ['execute_tool get_portfolio', 'effect chat.tool'])
    const tool = traced.find((s) => s.name === 'execute_tool get_portfolio')
    expect(tool, traced.map((s) => s.name).join(', ')).toBeDefined()
    expect(tool!.attributes).toMatchObject({ 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'get_portfolio', 'gen_ai.tool.call.id': 'call_q', 'gen_ai.tool.type': 'function' })
    expect(traced.find((s) => s.spanId === tool!.parentSpanId)?.name).toBe('effect chat.tool')
  })

  it("a DCA firing: one trace from its timer's firing to its swap's receipt", async () => {
    expect((await api('POST', `/agents/${agent}/start`)).status).toBe(200)
    const created = await api('POST', '/automations', { agent_id: agent, name: 'traced dca', kind: 'dca', dca: { tokenIn: 'ETH', tokenOut: 'USDC', amountPerRun: '0.001', everySeconds: 1, maxRuns: 1 } })
    expect(created.status, JSON.stringify(created.body)).toBe(201)
    const done = await automationUntil(api, created.body.id, (a) => a.status === 'completed', 30_000)
    const [firing] = done.firings as Array<{ outcome: string; txHash: string }>
    expect(firing).toMatchObject({ outcome: 'ok', txHash: expect.stringMatching(/^0x[0-9a-f]{64}$/) })
    // The firing is a trace of its own: its root is the application of the timer's inbox row.
    let root: ReceivedSpan | undefined
    await waitFor(() => (root = receiver.spans.find((s) => s.attributes['actor.id'] === created.body.id && s.attributes['actor.timer.key'] !== undefined)) !== undefined, 30_000)
    expect(root!.name).toMatch(/^actor\.inbox /)
    expect(root!.parentSpanId).toBe('')
    expect(root!.traceId).not.toBe(created.headers.get('traceparent')!.match(TRACEPARENT)![1])
    const spans = await traceOf(root!.traceId, ['effect automation.fire', 'execute_tool swap_execute', 'effect op.submit', 'chain.tx.sign', 'chain.tx.receipt'])
    const names = spans.map((s) => s.name).join(', ')
    // The firing's effect, the tool it called, the swap's own effects, its signing and its receipt: all under that root.
    expect(spans.filter((s) => s.parentSpanId === ''), names).toEqual([root])
    expect(spans.find((s) => s.name === 'execute_tool swap_execute')?.attributes['gen_ai.tool.name'], names).toBe('swap_execute')
    const swapId = (await app.services.pool.query<{ id: string }>('select id from actor where parent_id = $1', [created.body.id])).rows[0]!.id
    expect(spans.some((s) => s.name === 'effect op.submit' && s.attributes['actor.id'] === swapId), names).toBe(true)
    expect(spans.find((s) => s.name === 'chain.tx.receipt')!.attributes['chain.tx.hash']).toContain(firing!.txHash)
  })

  it('a webhook delivery of a swap\'s confirmation is a span in the trace of the swap', async () => {
    const hooks = await startReceiver()
    try {
      const hook = await api('POST', '/webhooks', { url: hooks.url(), events: ['swap.confirmed'] })
      expect(hook.status).toBe(201)
      hooks.trust(hook.body.secret)
      const res = await api('POST', '/swap/execute', { agentId: agent, tokenIn: 'ETH', tokenOut: 'USDC', amountIn: '0.01', slippageBps: 100 }, { 'Prefer': 'wait=30' })
      expect(res.body.status).toBe('confirmed')
      const [, traceId] = res.headers.get('traceparent')!.match(TRACEPARENT)!
      await waitFor(() => hooks.ofType('swap.confirmed').some((r) => r.payload.data.id === res.body.id), 15_000)
      const eventId = hooks.ofType('swap.confirmed').find((r) => r.payload.data.id === res.body.id)!.id
      const spans = await traceOf(traceId!, ['webhook.deliver', 'chain.tx.receipt'])
      const delivery = spans.find((s) => s.name === 'webhook.deliver')
      expect(delivery, spans.map((s) => s.name).join(', ')).toBeDefined()
      expect(delivery!.attributes).toMatchObject({ 'webhook.id': eventId, 'webhook.event_type': 'swap.confirmed', 'http.response.status_code': 200 })
      // Its parent is the swap's transition to confirmed: a span of the swap's own, in its trace.
      await waitFor(() => receiver.spans.some((s) => s.spanId === delivery!.parentSpanId), 15_000).catch(() => {})
      expect(receiver.spans.find((s) => s.spanId === delivery!.parentSpanId)?.attributes['actor.id']).toBe(res.body.id)
    } finally {
      await hooks.close()
    }
  })
})

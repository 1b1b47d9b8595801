import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createOpenAiProvider } from '../src/adapters/llm/openAiProvider.ts'
import { ModelProviderError, ModelProviderNotConfiguredError } from '../src/domain/errors.ts'
import type { ModelStreamEvent } from '../src/domain/chat/ports.ts'
import { startModelServer, type ModelServer } from './support/modelServer.ts'

let server: ModelServer
beforeAll(async () => {
  server = await startModelServer()
})
afterAll(() => server.stop())
beforeEach(() => server.mock.reset())

const provider = (opts: { maxRetries?: number; timeoutMs?: number } = {}) =>
  createOpenAiProvider({ baseUrl: server.baseUrl, apiKey: 'test-key', timeoutMs: opts.timeoutMs ?? 10_000, maxRetries: opts.maxRetries ?? 0 })

async function collect(events: AsyncIterable<ModelStreamEvent>): Promise<ModelStreamEvent[]> {
  const out: ModelStreamEvent[] = []
  for await (const e of events) out.push(e)
  return out
}

describe('model provider (openai SDK against the scripted server)', () => {
  it('answers text with the usage the provider reported', async () => {
    server.mock.onMessage('hello', { content: 'Hi there!', usage: { prompt_tokens: 12, completion_tokens: 3 } })
    const result = await provider().complete({ model: 'gpt-4o-mini', messages: [{ role: 'system', content: 'be brief' }, { role: 'user', content: 'hello' }], temperature: 0.2, maxTokens: 100 })
    expect(result).toMatchObject({ content: 'Hi there!', toolCalls: [], finishReason: 'stop', usage: { promptTokens: 12, completionTokens: 3, totalTokens: 15 } })
    const sent = server.mock.getLastRequest()!.body as Record<string, unknown>
    expect(sent).toMatchObject({ model: 'gpt-4o-mini', temperature: 0.2, max_tokens: 100 })
  })

  it('returns tool calls with their arguments, and sends tools and tool results in the SDK shape', async () => {
    server.mock.on({ userMessage: 'price of ETH', hasToolResult: false }, { toolCalls: [{ id: 'call_1', name: 'get_price', arguments: '{"symbol":"ETH"}' }], usage: { prompt_tokens: 30, completion_tokens: 8 } })
    const tools = [{ name: 'get_price', description: 'USD price of a token', parameters: { type: 'object', properties: { symbol: { type: 'string' } } } }]
    const first = await provider().complete({ model: 'm', messages: [{ role: 'user', content: 'price of ETH?' }], tools })
    expect(first.toolCalls).toEqual([{ id: 'call_1', name: 'get_price', arguments: '{"symbol":"ETH"}' }])
    expect(first.finishReason).toBe('tool_calls')
    expect((server.mock.getLastRequest()!.body as { tools: unknown[] }).tools).toEqual([{ type: 'function', function: tools[0] }])

    server.mock.onToolResult('call_1', { content: 'ETH is 3000 USD.' })
    const second = await provider().complete({
      model: 'm',
      messages: [
        { role: 'user', content: 'price of ETH?' },
        { role: 'assistant', content: null, toolCalls: first.toolCalls },
        { role: 'tool', toolCallId: 'call_1', content: '{"usd":"3000"}' },
      ],
      tools,
    })
    expect(second.content).toBe('ETH is 3000 USD.')
  })

  it('streams text deltas, then one done event with the whole text and the usage', async () => {
    server.mock.onMessage('tell me', { content: 'one two three four five', usage: { prompt_tokens: 7, completion_tokens: 5 } }, { chunkSize: 4 })
    const events = await collect(provider().stream({ model: 'm', messages: [{ role: 'user', content: 'tell me' }] }))
    const deltas = events.filter((e) => e.type === 'delta')
    expect(deltas.length).toBeGreaterThan(1)
    expect(events.at(-1)).toEqual({
      type: 'done',
      result: expect.objectContaining({ content: 'one two three four five', finishReason: 'stop', usage: { promptTokens: 7, completionTokens: 5, totalTokens: 12 } }),
    })
    expect(deltas.map((d) => (d as { content: string }).content).join('')).toBe('one two three four five')
    expect(server.mock.getLastRequest()!.body).toMatchObject({ stream: true, stream_options: { include_usage: true } })
  })

  it('streams tool-call deltas and assembles the calls', async () => {
    server.mock.onMessage('buy', { toolCalls: [{ id: 'call_9', name: 'swap_execute', arguments: '{"tokenIn":"USDC","tokenOut":"ETH","amount":"10"}' }] })
    const events = await collect(provider().stream({ model: 'm', messages: [{ role: 'user', content: 'buy' }] }))
    expect(events.some((e) => e.type === 'tool_call_delta')).toBe(true)
    const done = events.at(-1) as Extract<ModelStreamEvent, { type: 'done' }>
    expect(done.result.toolCalls).toEqual([{ id: 'call_9', name: 'swap_execute', arguments: '{"tokenIn":"USDC","tokenOut":"ETH","amount":"10"}' }])
    expect(done.result.usage).toMatchObject({ promptTokens: expect.any(Number), completionTokens: expect.any(Number) })
  })

  it('429 retried once by the SDK, then 500: a 502 model_provider_error with the status, never the raw body', async () => {
    server.mock.onMessage('hi', { content: 'never reached' })
    // One-shot errors are served newest first: queue the 500, then the 429 that comes before it.
    server.mock.nextRequestError(500, { message: 'secret-upstream-detail exploded', type: 'server_error' })
    server.mock.nextRequestError(429, { message: 'secret-upstream-detail rate limited', type: 'rate_limit_error' })
    const err = await provider({ maxRetries: 1 }).complete({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(ModelProviderError)
    expect(err).toMatchObject({ status: 502, code: 'model_provider_error', providerStatus: 500 })
    expect((err as Error).message).toContain('500')
    expect((err as Error).message).not.toContain('secret-upstream-detail')
    expect(server.mock.getRequests().map((r) => r.response.status)).toEqual([429, 500])
  })

  it('with no SDK retries a 429 is reported as such', async () => {
    server.mock.nextRequestError(429, { message: 'slow down' })
    const err = await provider().complete({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e)
    expect(err).toMatchObject({ status: 502, code: 'model_provider_error', providerStatus: 429 })
    expect(server.mock.getRequests()).toHaveLength(1)
  })

  it('a slow provider hits the configured timeout: 502 with no status', async () => {
    server.mock.onMessage('slow', { content: 'late' }, { chaos: { latencyMs: 3000 } })
    const err = await provider({ timeoutMs: 300 }).complete({ model: 'm', messages: [{ role: 'user', content: 'slow' }] }).catch((e: unknown) => e)
    expect(err).toMatchObject({ status: 502, code: 'model_provider_error', providerStatus: null })
    expect((err as Error).message).toMatch(/no answer within/)
  })

  it('a stream cut off mid-answer is a 502, after the deltas that did arrive', async () => {
    server.mock.onMessage('cut', { content: 'a long answer that never ends well' }, { chunkSize: 3, truncateAfterChunks: 2 })
    const seen: ModelStreamEvent[] = []
    const err = await (async () => {
      for await (const e of provider().stream({ model: 'm', messages: [{ role: 'user', content: 'cut' }] })) seen.push(e)
    })().catch((e: unknown) => e)
    expect(err).toMatchObject({ status: 502, code: 'model_provider_error' })
    expect(seen.some((e) => e.type === 'done')).toBe(false)
  })

  it('without OPENAI_BASE_URL or OPENAI_API_KEY every call is 503 naming the variables', async () => {
    const none = createOpenAiProvider({ timeoutMs: 1000, maxRetries: 0 })
    expect(none.configured).toBe(false)
    const err = await none.complete({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(ModelProviderNotConfiguredError)
    expect(err).toMatchObject({ status: 503, code: 'model_provider_not_configured' })
    expect((err as Error).message).toMatch(/OPENAI_BASE_URL/)
    expect((err as Error).message).toMatch(/OPENAI_API_KEY/)
    await expect(collect(none.stream({ model: 'm', messages: [] }))).rejects.toMatchObject({ code: 'model_provider_not_configured' })
  })
})

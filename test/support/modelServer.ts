import { LLMock } from '@copilotkit/aimock'

export type ModelServer = {
  /** The OpenAI-compatible base URL (…/v1) to hand to OPENAI_BASE_URL. */
  baseUrl: string
  /** aimock itself, to script answers: onMessage, on, nextRequestError, getRequests… */
  mock: LLMock
  stop(): Promise<void>
}

/**
 * A scripted OpenAI-compatible server (@copilotkit/aimock) on a free port, which the real
 * `openai` SDK talks to over HTTP. Script it per test:
 *
 * @example
 * const server = await startModelServer()
 * server.mock.onMessage('hello', { content: 'Hi!', usage: { prompt_tokens: 12, completion_tokens: 3 } })
 * server.mock.onToolCall('get_price', { content: 'ETH is 3000 USD' })
 * server.mock.onMessage('quote', { toolCalls: [{ name: 'swap_quote', arguments: '{"amount":"1"}' }] })
 * server.mock.nextRequestError(429)                              // next request only
 * server.mock.onMessage('slow', { content: 'late' }, { latency: 2000 })
 * server.mock.onMessage('cut', { content: 'a long answer…' }, { truncateAfterChunks: 1 })
 */
export async function startModelServer(): Promise<ModelServer> {
  // strict: an unscripted request is an error (503), never a silent made-up answer.
  const mock = new LLMock({ port: 0, host: '127.0.0.1', strict: true, logLevel: 'silent' })
  await mock.start()
  return { baseUrl: `${mock.url}/v1`, mock, stop: () => mock.stop() }
}

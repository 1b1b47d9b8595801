import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai'
import type { ChatCompletionCreateParamsBase, ChatCompletionMessageParam } from 'openai/resources/chat/completions'
import type { CompletionUsage } from 'openai/resources/completions'
import { ModelProviderError, ModelProviderNotConfiguredError } from '../../domain/errors.ts'
import type { ModelProvider, ModelRequest, ModelResult, ModelStreamEvent, ModelToolCall, ModelUsage } from '../../domain/chat/ports.ts'
import { failed, startSpan } from '../telemetry/spans.ts'
import type { Span } from '@opentelemetry/api'

export type OpenAiProviderOptions = {
  baseUrl?: string | undefined
  apiKey?: string | undefined
  /** Per attempt; the SDK's own default is 10 minutes. */
  timeoutMs: number
  /** SDK retries on 429/5xx/connection errors; kept low because the runtime owns retries. */
  maxRetries: number
}

/** OpenAI's own endpoint, used when only OPENAI_API_KEY is set. */
const OPENAI_DEFAULT_BASE_URL = 'https://api.openai.com/v1'

/**
 * The model provider over the `openai` SDK's chat completions API, which every OpenAI-compatible
 * server speaks (OpenAI, OpenRouter, vLLM, Ollama). Configured when OPENAI_BASE_URL or
 * OPENAI_API_KEY is set; otherwise every call is a 503 `model_provider_not_configured`.
 * SDK errors are wrapped here into a 502 `model_provider_error` carrying the provider's status.
 *
 * @example
 * const provider = createOpenAiProvider({ baseUrl: 'http://127.0.0.1:4010/v1', apiKey: 'x', timeoutMs: 60_000, maxRetries: 0 })
 * const { content, usage } = await provider.complete({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] })
 */
export function createOpenAiProvider(options: OpenAiProviderOptions): ModelProvider {
  if (options.baseUrl === undefined && options.apiKey === undefined) return notConfiguredProvider()
  // Every option is explicit, so the SDK never falls back to reading the environment itself.
  const client = new OpenAI({
    baseURL: options.baseUrl ?? OPENAI_DEFAULT_BASE_URL,
    // Local servers (Ollama, vLLM) take no key; the SDK still wants a value.
    apiKey: options.apiKey ?? 'none',
    timeout: options.timeoutMs,
    maxRetries: options.maxRetries,
  })
  const wrap = (err: unknown) => wrapProviderError(err, options.timeoutMs)
  const serverAddress = new URL(options.baseUrl ?? OPENAI_DEFAULT_BASE_URL).hostname

  return {
    configured: true,

    async complete(request) {
      const span = modelSpan(request, serverAddress)
      try {
        const completion = await client.chat.completions.create({ ...requestBody(request), stream: false }, { signal: request.signal })
        const choice = completion.choices[0]
        const toolCalls: ModelToolCall[] = []
        for (const call of choice?.message.tool_calls ?? []) {
          if (call.type === 'function') toolCalls.push({ id: noNul(call.id), name: noNul(call.function.name), arguments: noNul(call.function.arguments) })
        }
        return modelSpanEnd(span, {
          content: noNul(choice?.message.content ?? ''),
          toolCalls,
          finishReason: choice?.finish_reason ?? null,
          model: completion.model,
          usage: usageOf(completion.usage),
        })
      } catch (err) {
        failed(span, err)
        span.end()
        throw wrap(err)
      }
    },

    async *stream(request) {
      const content: string[] = []
      const calls: Array<{ id: string; name: string; arguments: string }> = []
      let finishReason: string | null = null
      let model = request.model
      let usage: ModelUsage | null = null
      const span = modelSpan(request, serverAddress)
      try {
        const chunks = await client.chat.completions.create(
          { ...requestBody(request), stream: true, stream_options: { include_usage: true } },
          { signal: request.signal },
        )
        for await (const chunk of chunks) {
          model = chunk.model || model
          // The usage chunk comes last, with no choices.
          if (chunk.usage) usage = usageOf(chunk.usage)
          const choice = chunk.choices[0]
          if (!choice) continue
          if (choice.finish_reason) finishReason = choice.finish_reason
          const text = noNul(choice.delta.content ?? '')
          if (text) {
            content.push(text)
            yield { type: 'delta', content: text } satisfies ModelStreamEvent
          }
          for (const d of choice.delta.tool_calls ?? []) {
            const call = (calls[d.index] ??= { id: '', name: '', arguments: '' })
            if (d.id) call.id = noNul(d.id)
            if (d.function?.name) call.name += noNul(d.function.name)
            if (d.function?.arguments) call.arguments += noNul(d.function.arguments)
            yield { type: 'tool_call_delta', index: d.index, id: d.id, name: d.function?.name, arguments: d.function?.arguments }
          }
        }
      } catch (err) {
        failed(span, err)
        span.end()
        throw wrap(err)
      }
      const result: ModelResult = { content: content.join(''), toolCalls: calls.filter((c) => c.name !== ''), finishReason, model, usage }
      yield { type: 'done', result: modelSpanEnd(span, result) }
    },
  }
}

/**
 * The text without NUL characters, which Postgres refuses in `text` and `jsonb`: a model that
 * answered one would fail every attempt to store its answer (and be called again each time).
 */
const noNul = (text: string) => (text.includes('\u0000') ? text.replaceAll('\u0000', '') : text)

/** A provider for a service started without OPENAI_BASE_URL / OPENAI_API_KEY. */
function notConfiguredProvider(): ModelProvider {
  return {
    configured: false,
    complete: () => Promise.reject(new ModelProviderNotConfiguredError()),
    // Throws on the first read, where a real stream's connection error would surface.
    async *stream() {
      throw new ModelProviderNotConfiguredError()
    },
  }
}

function requestBody(r: ModelRequest): ChatCompletionCreateParamsBase {
  return {
    model: r.model,
    messages: r.messages.map(toSdkMessage),
    ...(r.tools?.length
      ? { tools: r.tools.map((t) => ({ type: 'function' as const, function: { name: t.name, description: t.description, parameters: t.parameters } })) }
      : {}),
    ...(r.temperature !== undefined ? { temperature: r.temperature } : {}),
    // `max_tokens` rather than `max_completion_tokens`: every OpenAI-compatible server reads it.
    ...(r.maxTokens !== undefined ? { max_tokens: r.maxTokens } : {}),
  }
}

function toSdkMessage(m: ModelRequest['messages'][number]): ChatCompletionMessageParam {
  switch (m.role) {
    case 'tool':
      return { role: 'tool', tool_call_id: m.toolCallId, content: m.content }
    case 'assistant':
      return {
        role: 'assistant',
        content: m.content,
        ...(m.toolCalls?.length
          ? { tool_calls: m.toolCalls.map((c) => ({ id: c.id, type: 'function' as const, function: { name: c.name, arguments: c.arguments } })) }
          : {}),
      }
    default:
      return { role: m.role, content: m.content }
  }
}

/** A model call's span, with the GenAI semantic conventions' attributes (docs/operations.md, Traces). */
function modelSpan(request: ModelRequest, serverAddress: string): Span {
  return startSpan(`chat ${request.model}`, {
    'gen_ai.operation.name': 'chat',
    'gen_ai.provider.name': 'openai',
    'gen_ai.request.model': request.model,
    ...(request.maxTokens !== undefined ? { 'gen_ai.request.max_tokens': request.maxTokens } : {}),
    ...(request.temperature !== undefined ? { 'gen_ai.request.temperature': request.temperature } : {}),
    'server.address': serverAddress,
  })
}

function modelSpanEnd(span: Span, result: ModelResult): ModelResult {
  if (span.isRecording()) {
    span.setAttributes({
      'gen_ai.response.model': result.model,
      ...(result.finishReason ? { 'gen_ai.response.finish_reasons': [result.finishReason] } : {}),
      ...(result.usage ? { 'gen_ai.usage.input_tokens': result.usage.promptTokens, 'gen_ai.usage.output_tokens': result.usage.completionTokens } : {}),
    })
  }
  span.end()
  return result
}

function usageOf(u: CompletionUsage | null | undefined): ModelUsage | null {
  if (!u) return null
  return { promptTokens: u.prompt_tokens, completionTokens: u.completion_tokens, totalTokens: u.total_tokens ?? u.prompt_tokens + u.completion_tokens }
}

/** Short reasons of ours per status: the provider's own body may echo prompts or keys, so it stays in `cause`. */
function reasonFor(status: number): string {
  if (status === 401 || status === 403) return 'the provider refused our credentials (check OPENAI_API_KEY).'
  if (status === 404) return 'the provider does not know this model or endpoint (check the catalog and OPENAI_BASE_URL).'
  if (status === 429) return 'the provider is rate limiting us; retry later.'
  if (status === 400 || status === 422) return 'the provider rejected the request.'
  if (status >= 500) return 'the provider failed to answer.'
  return 'the provider answered with an error.'
}

/**
 * Turns anything the SDK throws into a ModelProviderError (502), keeping the original as `cause`.
 *
 * @example
 * try { await client.chat.completions.create(body) } catch (err) { throw wrapProviderError(err, 60_000) }
 */
export function wrapProviderError(err: unknown, timeoutMs: number): ModelProviderError {
  if (err instanceof ModelProviderError) return err
  if (err instanceof APIConnectionTimeoutError) {
    return new ModelProviderError({ providerStatus: null, reason: `no answer within ${Math.round(timeoutMs / 1000)} s.`, cause: err })
  }
  if (err instanceof APIUserAbortError) return new ModelProviderError({ providerStatus: null, reason: 'the call was cancelled.', cause: err })
  if (err instanceof APIConnectionError) return new ModelProviderError({ providerStatus: null, reason: 'could not reach the provider.', cause: err })
  if (err instanceof APIError && typeof err.status === 'number') {
    return new ModelProviderError({ providerStatus: err.status, reason: reasonFor(err.status), cause: err })
  }
  return new ModelProviderError({ providerStatus: null, reason: 'the connection broke off or the answer was malformed.', cause: err })
}

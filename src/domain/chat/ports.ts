/**
 * What the domain needs from a model provider. `src/llm/openAiProvider.ts` implements it with the
 * `openai` SDK; the composition root hands it in. Shapes are ours, not the SDK's, so a use case
 * can be tested with a plain object.
 */

export type ModelToolCall = { id: string; name: string; arguments: string }

export type ModelMessage =
  | { role: 'system' | 'user'; content: string }
  | { role: 'assistant'; content: string | null; toolCalls?: ModelToolCall[] }
  | { role: 'tool'; toolCallId: string; content: string }

/** A tool the model may call: its name, a description for the model and a JSON Schema. */
export type ModelTool = { name: string; description: string; parameters: Record<string, unknown> }

export type ModelRequest = {
  /** The provider's model name (a catalog entry's `providerModel`). */
  model: string
  messages: ModelMessage[]
  tools?: ModelTool[] | undefined
  temperature?: number | undefined
  /** Upper bound on completion tokens: what a caller reserves credits for. */
  maxTokens?: number | undefined
  signal?: AbortSignal | undefined
}

/** Token counts as the provider reported them. */
export type ModelUsage = { promptTokens: number; completionTokens: number; totalTokens: number }

export type ModelResult = {
  content: string
  toolCalls: ModelToolCall[]
  finishReason: string | null
  /** The model the provider says answered. */
  model: string
  /** null when the provider reported none (the caller then bills what it reserved). */
  usage: ModelUsage | null
}

/** One streamed event: text and tool-call pieces as they arrive, then the whole result. */
export type ModelStreamEvent =
  | { type: 'delta'; content: string }
  | { type: 'tool_call_delta'; index: number; id?: string | undefined; name?: string | undefined; arguments?: string | undefined }
  | { type: 'done'; result: ModelResult }

export interface ModelProvider {
  /** false when no provider is configured: every call then throws ModelProviderNotConfiguredError (503). */
  readonly configured: boolean
  /** One chat completion. Throws ModelProviderError (502) when the provider fails. */
  complete(request: ModelRequest): Promise<ModelResult>
  /** The same call streamed; ends with one `done` event carrying the reported usage. */
  stream(request: ModelRequest): AsyncIterable<ModelStreamEvent>
}

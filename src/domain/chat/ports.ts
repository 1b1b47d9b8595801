import type { Queryable } from '../billing/ports.ts'

/**
 * What the domain needs from a model provider. `src/adapters/llm/openAiProvider.ts` implements it with the
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

/** A stored chat message, as `GET /agents/:id/messages` shows it. */
export type ChatMessage = {
  id: string
  role: 'user' | 'assistant' | 'system' | 'tool'
  content: string
  model: string | null
  toolCalls?: Array<{ id: string; name: string; arguments: string }>
  toolCallId?: string
  createdAt: string
  /** The exact timestamp, for cursors. */
  cursorAt: string
}

export type NewChatMessage = {
  accountId: string
  agentId: string
  turnId: string
  /** Unique per turn: `user`, `model:<effect id>`, `tool:<call id>`; a second write with it is a no-op. */
  key: string
  role: ChatMessage['role']
  content: string
  model: string | null
  toolCalls?: ModelToolCall[] | undefined
  toolCallId?: string | undefined
}

/** Chat messages' storage (src/adapters/db/chatMessages.repository.ts). */
export interface ChatMessagesRepository {
  /** Writes a message once per (turn, key), in the caller's transaction when given. */
  insert(message: NewChatMessage, tx?: Queryable): Promise<void>
  /**
   * An agent's messages written by its current owner's turns, newest first, at most `limit`,
   * strictly before `before` when given (a turn of a former owner still running at a sale wrote
   * under that owner's account: never shown).
   */
  list(agentId: string, opts: { limit: number; before?: Date | undefined }): Promise<ChatMessage[]>
  /**
   * User and assistant text of the agent's earlier turns (not `turnId`) of `accountId`, newest
   * first, for the prompt; none once the agent is no longer that account's.
   */
  history(owner: { accountId: string; agentId: string }, turnId: string, limit: number): Promise<ModelMessage[]>
}

/** What chat needs of a catalog model (src/adapters/llm/modelCatalog.ts `Model`). */
export type ChatModel = {
  id: string
  inputCreditsPerMillion: number
  outputCreditsPerMillion: number
  contextWindow: number
  supportsTools: boolean
}

export type ChatTurnToolCall = { id: string; name: string; arguments: string; status: string; result: unknown }

/** A chat turn as its actor records it. */
export type ChatTurnState = {
  id: string
  agentId: string
  status: 'thinking' | 'acting' | 'completed' | 'failed'
  content: string
  model: string
  toolCalls: ChatTurnToolCall[]
  usage: ModelUsage
  credits: number
  error: { code: string; message: string; status: number } | null
}

export type NewChatTurn = {
  turnId: string
  accountId: string
  agentId: string
  /** The catalog id of the model. */
  model: string
  temperature: number | null
  /** The provider is streamed (deltas published on the chat bus) rather than called at once. */
  stream: boolean
  /** Model calls at most (CHAT_MAX_ROUNDS); a tool call asked for in the last one is skipped. */
  maxRounds: number
  /** The tools the agent's skills grant (names), fixed when the turn starts. */
  tools: string[]
  /** The system prompt (the agent, its owner's instructions, its skills' text), fixed when the turn starts. */
  system: string
  message: string
}

/** Chat turns as actors (src/actors/chatTurn/chatTurns.ts). */
export interface ChatTurns {
  /**
   * Creates the turn's actor and writes its user message, in one statement; with `coverCredits`,
   * only when the account's balance less its reservations covers them (InsufficientCreditsError otherwise).
   */
  start(turn: NewChatTurn, opts?: { coverCredits?: number }): Promise<void>
  /** Waits (woken by the turn's commits) until it ended or `waitMs` passed; undefined for an unknown turn. */
  wait(turnId: string, waitMs: number): Promise<ChatTurnState | undefined>
  get(turnId: string): Promise<(ChatTurnState & { accountId: string }) | undefined>
}

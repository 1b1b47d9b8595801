import { assign, enqueueActions, setup, type AnyEventObject, type AnyMachineSnapshot } from 'xstate'
import { z } from 'zod'
import { ValidationError } from '../../domain/errors.ts'
import type { ModelMessage } from '../../domain/chat/ports.ts'
import type { ActorKind } from '../runtime/index.ts'
import type { NewChatTurn } from '../../domain/chat/ports.ts'
import { MODEL_CALL, modelCallEventSchema, type ModelCallParams } from '../conversation/modelCall.effects.ts'
import { TOOL_CALL, TOOL_RESULT, toolCallEventSchema, type ToolCallParams, type ToolResultParams } from '../conversation/toolCall.effects.ts'
import { childEndMessages, conversationRetention, keyOf, newToolCalls, onChildEnd, onToolDone, onToolStarted, type ToolBook, type ToolCallState } from '../conversation/toolCalls.ts'
import type { ChildEndEvent } from '../runtime/index.ts'

/** What a turn starts with (the domain's NewChatTurn: the agent, the model, the granted tools, the message). */
export type ChatTurnInput = NewChatTurn

export type ChatToolCallView = ToolCallState
type Usage = { promptTokens: number; completionTokens: number; totalTokens: number }

export type ChatTurnContext = ChatTurnInput & {
  round: number
  /** This turn's messages as the model sees them: the user message, assistant messages, tool results. */
  transcript: ModelMessage[]
  toolCalls: ChatToolCallView[]
  /** Keys of the calls of this round not answered yet. */
  pending: string[]
  /** Child ends that came before their call's report (absent in turns stored before children). */
  earlyEnds?: Record<string, ChildEndEvent>
  content: string
  /** The model the provider says answered last. */
  answeredBy: string | null
  usage: Usage
  credits: number
  error: { code: string; message: string; status: number } | null
}

export const chatTurnEventSchema = z.union([modelCallEventSchema, toolCallEventSchema])
type ChatTurnEvent = z.infer<typeof chatTurnEventSchema>

const addUsage = (a: Usage, b: Usage | null): Usage =>
  b ? { promptTokens: a.promptTokens + b.promptTokens, completionTokens: a.completionTokens + b.completionTokens, totalTokens: a.totalTokens + b.totalTokens } : a

/**
 * One chat turn: `thinking` (a model call, a claimed effect billed once) -> `acting` (one effect
 * per tool call the model asked for, keyed by its call id) -> `thinking` ... -> `completed`, or
 * `failed` (the provider failed, credits ran out). Reusable pieces: the model-call and tool-call
 * effects (modelCall.effect.ts, toolCall.effect.ts) take their inputs from this context.
 */
export const chatTurnMachine = setup({
  types: { context: {} as ChatTurnContext, events: {} as ChatTurnEvent, input: {} as ChatTurnInput },
  actions: {
    [MODEL_CALL]: (_, _p: ModelCallParams) => {},
    [TOOL_CALL]: (_, _p: ToolCallParams) => {},
    [TOOL_RESULT]: (_, _p: ToolResultParams) => {},
  },
  guards: {
    wantsTools: ({ context, event }) => event.type === 'model.done' && event.toolCalls.length > 0 && context.round < context.maxRounds,
    allToolsDone: ({ context }) => context.pending.length === 0,
  },
}).createMachine({
  id: 'chatturn',
  initial: 'thinking',
  context: ({ input }) => ({
    ...input,
    round: 1,
    transcript: [{ role: 'user', content: input.message }],
    toolCalls: [],
    pending: [],
    earlyEnds: {},
    content: '',
    answeredBy: null,
    usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 },
    credits: 0,
    error: null,
  }),
  states: {
    thinking: {
      entry: { type: MODEL_CALL, params: ({ context }) => ({ round: context.round }) },
      on: {
        'model.done': [
          {
            guard: 'wantsTools',
            target: 'acting',
            actions: assign(({ context, event }) => {
              const calls = newToolCalls(event.toolCalls, context.round, 'pending')
              return { ...recordAnswer(context, event), toolCalls: [...context.toolCalls, ...calls], pending: calls.map(keyOf) }
            }),
          },
          {
            target: 'completed',
            actions: assign(({ context, event }) => ({
              ...recordAnswer(context, event),
              // Asked for in the last round: not run, the turn ends with what it has.
              toolCalls: [...context.toolCalls, ...newToolCalls(event.toolCalls, context.round, 'skipped')],
            })),
          },
        ],
        'model.failed': { target: 'failed', actions: assign({ error: ({ event }) => event.error }) },
        'chat.model.failed': { target: 'failed', actions: assign({ error: ({ event }) => ({ code: 'model_call_failed', message: event.error, status: 502 }) }) },
      },
    },
    acting: {
      entry: enqueueActions(({ context, enqueue }) => {
        for (const call of context.toolCalls.filter((c) => context.pending.includes(keyOf(c)))) {
          enqueue({ type: TOOL_CALL, params: { callId: call.id, key: keyOf(call), name: call.name, arguments: call.arguments } })
        }
      }),
      always: { guard: 'allToolsDone', target: 'thinking', actions: assign({ round: ({ context }) => context.round + 1 }) },
      on: {
        'tool.done': { actions: assign(({ context, event }) => fromBook(onToolDone(bookOf(context), event))) },
        // A fund-moving call started a child (a swap): the turn waits in `acting` for its end, however long the chain takes.
        'tool.started': { actions: enqueueActions(({ context, event, enqueue }) => settle(context, onToolStarted(bookOf(context), event), enqueue)) },
        'child.done': { actions: enqueueActions(({ context, event, enqueue }) => settle(context, onChildEnd(bookOf(context), event), enqueue)) },
        'child.failed': { actions: enqueueActions(({ context, event, enqueue }) => settle(context, onChildEnd(bookOf(context), event), enqueue)) },
        'chat.tool.failed': { target: 'failed', actions: assign({ error: ({ event }) => ({ code: 'tool_call_failed', message: event.error, status: 502 }) }) },
      },
    },
    completed: { type: 'final' },
    failed: { type: 'final' },
  },
})

const bookOf = (c: ChatTurnContext): ToolBook => ({ calls: c.toolCalls, pending: c.pending, transcript: c.transcript, earlyEnds: c.earlyEnds ?? {} })
const fromBook = (b: ToolBook) => ({ toolCalls: b.calls, pending: b.pending, transcript: b.transcript, earlyEnds: b.earlyEnds })

/** Takes the book's new state, and writes the tool message of each call a child's end answered. */
function settle(
  context: ChatTurnContext,
  next: ToolBook,
  enqueue: { assign(a: Partial<ChatTurnContext>): void; (action: { type: typeof TOOL_RESULT; params: ToolResultParams }): void },
) {
  enqueue.assign(fromBook(next))
  for (const params of childEndMessages(bookOf(context), next)) enqueue({ type: TOOL_RESULT, params })
}

function recordAnswer(context: ChatTurnContext, event: Extract<ChatTurnEvent, { type: 'model.done' }>) {
  return {
    content: event.content,
    answeredBy: event.model,
    usage: addUsage(context.usage, event.usage),
    credits: context.credits + event.credits,
    transcript: [...context.transcript, { role: 'assistant' as const, content: event.content || null, toolCalls: event.toolCalls }],
  }
}

export const CHAT_TURN_FINAL = new Set(['completed', 'failed'])

export const chatTurnKind: ActorKind = {
  kind: 'chatturn',
  machine: chatTurnMachine,
  machineVersion: 1,
  parseEvent(event: unknown): AnyEventObject {
    const parsed = chatTurnEventSchema.safeParse(event)
    if (!parsed.success) throw new ValidationError({ type: 'unknown chat turn event' })
    return parsed.data
  },
  statusOf: (s: AnyMachineSnapshot) => String(s.value),
  effects: [MODEL_CALL, TOOL_CALL, TOOL_RESULT],
  failureStates: ['failed'],
  // What only the model calls and the machine needed: the API serves the content, tool calls,
  // usage and outcome (the turn's id and account are its actor's, `chatTurns.ts` reads them there).
  compactDrops: ['transcript', 'system', 'tools', 'pending', 'earlyEnds', 'turnId', 'accountId', 'message', 'round', 'maxRounds', 'temperature', 'stream', 'answeredBy', 'firstCallHold'],
  retention: (s: AnyMachineSnapshot) => conversationRetention((s.context as ChatTurnContext).toolCalls ?? []),
}

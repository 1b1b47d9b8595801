import { z } from 'zod'
import type { ModelMessage, ModelToolCall } from '../../domain/chat/ports.ts'
import { stableJson } from '../../domain/util/stableJson.ts'
import type { RunToolCall } from '../../domain/runs/ports.ts'
import { childEndEventSchema, type ChildEndEvent } from '../runtime/index.ts'

/** A tool call's result, as the message that records it carries it. */
export type ToolResultParams = { messageKey: string; callId: string; name: string; status: string; result: unknown }

/**
 * The tool calls of a chat turn or a run, as the machine keeps them (the domain's RunToolCall:
 * the model's id, the machine's key, status, result, the child it waits for). A call is known by its
 * `key` (`<round>.<index>`, given by the machine), never by the model's own id alone: open
 * models number their calls `call_0` in every round, or twice in one answer.
 */
export type ToolCallState = RunToolCall

/** The model's tool calls of one answer, keyed `<round>.<index>`. */
export const newToolCalls = (calls: ModelToolCall[], round: number, status: 'pending' | 'skipped'): ToolCallState[] =>
  calls.map((c, i) => ({ ...c, key: `${round}.${i}`, status, result: null, childId: null, doneAt: null }))

export const keyOf = (c: Pick<ToolCallState, 'id' | 'key'>) => c.key ?? c.id

/**
 * The retention class of an ended conversation (a run, a chat turn): `quiet` when none of its
 * tool calls started a child (no swap, transfer, launch or claim: it moved no money), which is
 * kept the shorter window; `default` otherwise.
 */
export const conversationRetention = (calls: readonly Pick<ToolCallState, 'childId'>[]): 'quiet' | 'default' =>
  calls.some((c) => c.childId) ? 'default' : 'quiet'

/** What the tool-call effect reports: the tool's answer, or the child it started (its answer comes with the child's end). */
export const toolCallOutcomeSchemas = [
  // `key` absent: an event stored before keys were kept (its `callId` is the key then).
  z.object({ type: z.literal('tool.done'), effectId: z.string(), callId: z.string(), key: z.string().optional(), status: z.enum(['ok', 'refused']), result: z.unknown(), at: z.string().optional() }),
  z.object({ type: z.literal('tool.started'), effectId: z.string(), callId: z.string(), key: z.string(), childId: z.string(), result: z.unknown() }),
  childEndEventSchema,
] as const
export type ToolDone = z.infer<(typeof toolCallOutcomeSchemas)[0]>
export type ToolStarted = z.infer<(typeof toolCallOutcomeSchemas)[1]>

/** A machine's tool-call bookkeeping: the calls of the current round, the keys still pending, the transcript. */
export type ToolBook = {
  calls: ToolCallState[]
  pending: string[]
  transcript: ModelMessage[]
  /** Child ends that arrived before the call that started the child reported it (kept until it does). */
  earlyEnds: Record<string, ChildEndEvent>
}

/**
 * A call that ended: its status and result recorded, the model's tool message appended, no longer
 * pending. The message is the result as JSON with sorted keys: the result comes in an event, and
 * a replay reads that event back from the journal (jsonb, which reorders keys), so the text must
 * not depend on the order the keys came in.
 */
function finish(book: ToolBook, key: string, end: { status: ToolCallState['status']; result: unknown; at: string | null; effectId?: string }): ToolBook {
  const call = book.calls.find((c) => keyOf(c) === key)
  if (!call || !book.pending.includes(key)) return book
  return {
    ...book,
    pending: book.pending.filter((k) => k !== key),
    calls: book.calls.map((c) => (c === call ? { ...c, status: end.status, result: end.result, doneAt: end.at, ...(end.effectId ? { effectId: end.effectId } : {}) } : c)),
    transcript: [...book.transcript, { role: 'tool' as const, toolCallId: call.id, content: stableJson(end.result) }],
  }
}

/** The tool answered at once (a read, a refusal). */
export const onToolDone = (book: ToolBook, e: ToolDone): ToolBook =>
  finish(book, e.key ?? e.callId, { status: e.status, result: e.result, at: e.at ?? null, effectId: e.effectId })

/** The call's result once its child ended: the tool's first answer updated with the child's output. */
function childOutcome(started: unknown, end: ChildEndEvent) {
  const output = end.output && typeof end.output === 'object' ? (end.output as Record<string, unknown>) : {}
  const first = started && typeof started === 'object' ? (started as Record<string, unknown>) : {}
  return { status: end.type === 'child.done' ? ('ok' as const) : ('failed' as const), result: { ...first, ...output, status: end.status } }
}

/** The tool started a child (a swap): the call waits for its end, which may already have arrived. */
export function onToolStarted(book: ToolBook, e: ToolStarted): ToolBook {
  const early = book.earlyEnds[e.childId]
  const marked = { ...book, calls: book.calls.map((c) => (keyOf(c) === e.key ? { ...c, childId: e.childId, result: e.result, effectId: e.effectId } : c)) }
  if (!early) return marked
  const { [e.childId]: _, ...earlyEnds } = book.earlyEnds
  return finish({ ...marked, earlyEnds }, e.key, { ...childOutcome(e.result, early), at: early.at ?? null })
}

/** A child ended: the call that started it ends with the child's outcome (or the end waits for that call's report). */
export function onChildEnd(book: ToolBook, e: ChildEndEvent): ToolBook {
  const call = book.calls.find((c) => c.childId === e.childId && book.pending.includes(keyOf(c)))
  if (!call) return { ...book, earlyEnds: { ...book.earlyEnds, [e.childId]: e } }
  return finish(book, keyOf(call), { ...childOutcome(call.result, e), at: e.at ?? null })
}

/** The model's ids of the calls still pending (what a stop finds in flight). */
export const pendingCallIds = (book: Pick<ToolBook, 'calls' | 'pending'>) => book.calls.filter((c) => book.pending.includes(keyOf(c))).map((c) => c.id)

/** The tool messages of the calls a child's end answered (between two states of the book): the record effect writes them. */
export const childEndMessages = (before: ToolBook, after: ToolBook): ToolResultParams[] =>
  after.calls
    .filter((c) => c.childId && c.status !== 'pending' && before.pending.includes(keyOf(c)) && !after.pending.includes(keyOf(c)))
    .map((c) => ({ messageKey: `tool:${c.effectId}`, callId: c.id, name: c.name, status: c.status, result: c.result }))

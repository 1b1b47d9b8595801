import { z } from 'zod'
import { ToolNotGrantedError, ValidationError } from '../domain/errors.ts'
import type { Core } from '../core.ts'
import { callTool, type ToolOutcome } from '../tools/callTool.ts'
import { findTool } from '../tools/registry.ts'
import type { EffectHandler, EffectContext, EffectRow, FinishWrite } from './actorKind.ts'
import type { ChatBus } from './chatBus.ts'

/** The tool-call effect: one tool call of a model, keyed by the model's tool call id. */
export const TOOL_CALL = 'chat.tool'
export type ToolCallParams = { callId: string; name: string; arguments: string }

/** The scopes a model acts with: it never changes a policy, a payout wallet or a whitelist. */
export const MODEL_SCOPES = ['read', 'trade'] as const

/** What the tool-call effect reports to its actor. */
export const toolCallEventSchema = z.discriminatedUnion('type', [
  // `at`: when the tool call ended (absent in events stored before it was kept).
  z.object({ type: z.literal('tool.done'), effectId: z.string(), callId: z.string(), status: z.enum(['ok', 'refused']), result: z.unknown(), at: z.string().optional() }),
  z.object({ type: z.literal(`${TOOL_CALL}.failed`), effectId: z.string(), error: z.string() }),
])

/** Who a tool call acts for, as the caller (a chat turn, a run) binds it. */
export type ToolCallBinding = {
  accountId: string
  agentId: string
  /** The tool names the agent's skills grant. */
  granted: readonly string[]
  /** Makes the model's call id unique beyond its turn (a model may reuse `call_0` in every turn). */
  callKey(callId: string): string
  /** Where `tool_call` / `tool_result` are published (null: nowhere). */
  streamKey: string | null
}

export type ToolCallDeps = {
  core(): Core
  bus: ChatBus
  bindingOf(effect: EffectRow, ctx: EffectContext): Promise<ToolCallBinding>
  /** Writes made in the transaction that records the result (e.g. the tool message). */
  recordResult?(effect: EffectRow, view: { callId: string; name: string; content: string }, tx: Parameters<FinishWrite>[0]): Promise<void>
}

/**
 * The tool-call effect handler: runs the tool through `callTool` bound to the agent, with the
 * call id derived from the model's tool call id (a fund-moving tool derives its operation id
 * from it, so a retry after a crash finds its operation and sends nothing new). A tool the
 * skills do not grant, arguments that are not JSON, another agent's id, an amount over the
 * policy: refused, and the refusal (code and message) is the result the model sees.
 */
export function createToolCallEffect(deps: ToolCallDeps): EffectHandler {
  return async (effect, ctx) => {
    const p = effect.params as ToolCallParams
    const binding = await deps.bindingOf(effect, ctx)
    if (binding.streamKey) deps.bus.publish(binding.streamKey, { type: 'tool_call', id: p.callId, name: p.name, arguments: p.arguments })
    const outcome = await run(deps, binding, p)
    const result = outcome.ok ? outcome.result : outcome.error
    const status = outcome.ok ? 'ok' : 'refused'
    ctx.finishWith((tx) => deps.recordResult?.(effect, { callId: p.callId, name: p.name, content: JSON.stringify(result) }, tx) ?? Promise.resolve())
    if (binding.streamKey) deps.bus.publish(binding.streamKey, { type: 'tool_result', id: p.callId, name: p.name, status, result })
    return { type: 'tool.done', callId: p.callId, status, result, at: new Date().toISOString() }
  }
}

async function run(deps: ToolCallDeps, binding: ToolCallBinding, p: ToolCallParams): Promise<ToolOutcome> {
  const tool = findTool(p.name)
  if (!tool || !binding.granted.includes(p.name) || !(MODEL_SCOPES as readonly string[]).includes(tool.scope)) return refusal(new ToolNotGrantedError(p.name))
  let args: unknown
  try {
    args = p.arguments.trim() === '' ? {} : JSON.parse(p.arguments)
  } catch {
    return refusal(new ValidationError({ arguments: 'Must be a JSON object.' }, 'Invalid tool arguments.'))
  }
  return callTool(tool, args, { core: deps.core(), accountId: binding.accountId, agent: { bound: binding.agentId }, callId: binding.callKey(p.callId) })
}

const refusal = (err: ToolNotGrantedError | ValidationError): ToolOutcome => ({
  ok: false,
  error: { error: err.message, code: err.code, ...(err.fieldErrors ? { fieldErrors: err.fieldErrors } : {}) },
  status: err.status,
})

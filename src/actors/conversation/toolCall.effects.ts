import { z } from 'zod'
import { ToolNotGrantedError, ValidationError } from '../../domain/errors.ts'
import type { ParentBinding, ToolOutcome, ToolPort } from '../../domain/toolCall.types.ts'
import { toolCallOutcomeSchemas, type ToolResultParams } from './toolCalls.ts'

export type { ToolResultParams }
import { releaseUnstartedWrite } from '../../adapters/db/walletOp.store.ts'
import type { EffectHandler, EffectContext, EffectRow } from '../runtime/index.ts'
import type { SqlWrite } from '../../domain/billing/ports.ts'
import type { ChatBus } from './chatBus.ts'
import { inToolSpan } from '../../adapters/telemetry/spans.ts'

/** The tool-call effect: one tool call of a model, keyed by the machine's key for it (`<round>.<index>`). */
export const TOOL_CALL = 'chat.tool'
/** `key` is absent in effects stored before keys were kept (the model's call id served then). */
export type ToolCallParams = { callId: string; key?: string; name: string; arguments: string }
/** The effect that writes a tool message once the child a call started has ended (the call's result is known only then). */
export const TOOL_RESULT = 'chat.tool.result'

/**
 * Gives back what attempts of the call `callId` (a tool call's effect id, an automation's firing
 * key) reserved for an operation no actor came of: every fund-moving tool derives its
 * operation's id from the call id (`operationIdsOf`). Sent with an outcome that started no child.
 */
export const releaseUnstartedOf = (tools: ToolPort, accountId: string, callId: string) => releaseUnstartedWrite(tools.operationIdsOf(accountId, callId))

/** The scopes a model acts with: it never changes a policy, a payout wallet or a whitelist. */
export const MODEL_SCOPES = ['read', 'trade'] as const

/** What the tool-call effect reports to its actor, and the end of a child one of its calls started. */
export const toolCallEventSchema = z.discriminatedUnion('type', [
  ...toolCallOutcomeSchemas,
  z.object({ type: z.literal(`${TOOL_CALL}.failed`), effectId: z.string(), error: z.string() }),
])

/** Who a tool call acts for, as the caller (a chat turn, a run) binds it. */
export type ToolCallBinding = {
  accountId: string
  agentId: string
  /** The tool names the agent's skills grant. */
  granted: readonly string[]
  /** Makes the model's call id unique beyond its turn, for a call stored before keys were kept. */
  callKey(callId: string): string
  /** Where `tool_call` / `tool_result` are published (null: nowhere). */
  streamKey: string | null
}

export type ToolCallDeps = {
  tools: ToolPort
  bus: ChatBus
  bindingOf(effect: EffectRow, ctx: EffectContext): Promise<ToolCallBinding>
  /** A write made with the result, in the statement that records it (the tool message). */
  resultWrite?(effect: EffectRow, view: { messageKey: string; callId: string; name: string; content: string }): Promise<SqlWrite>
}

/**
 * The tool-call effect handler: runs the tool through the tool port, bound to the agent. The call id
 * the tool derives its operation id from is this effect's id (stable across retries, unique per
 * call whatever the model names it), so a retry after a crash finds its operation and sends
 * nothing new. A fund-moving tool starts its operation as a child of the turn or run and the
 * effect reports `tool.started`: the actor waits for the child's end, however long the chain
 * takes. A tool the skills do not grant, arguments that are not JSON, another agent's id, an
 * amount over the policy: refused, and the refusal (code and message) is the result the model sees.
 */
export function createToolCallEffect(deps: ToolCallDeps): EffectHandler {
  const handler: EffectHandler = async (effect, ctx) => {
    const p = effect.params as ToolCallParams
    const binding = await deps.bindingOf(effect, ctx)
    if (binding.streamKey) deps.bus.publish(binding.streamKey, { type: 'tool_call', id: p.callId, name: p.name, arguments: p.arguments })
    let childId: string | undefined
    const parent = { actorId: effect.actorId, started: (id: string) => void (childId = id) }
    const outcome = await inToolSpan(p.name, p.callId, () => run(deps, binding, p, { callId: p.key ? effect.id : binding.callKey(p.callId), parent }))
    const result = outcome.ok ? outcome.result : outcome.error
    if (outcome.ok && childId && p.key) return { type: 'tool.started', callId: p.callId, key: p.key, childId, result }
    const status = outcome.ok ? 'ok' : 'refused'
    // No child started: what an earlier attempt of this call reserved for one is given back.
    if (p.key && deps.tools.find(p.name)?.movesFunds) ctx.finishWith(releaseUnstartedOf(deps.tools, binding.accountId, effect.id))
    if (deps.resultWrite) ctx.finishWith(await deps.resultWrite(effect, { messageKey: `tool:${p.key ? effect.id : p.callId}`, callId: p.callId, name: p.name, content: JSON.stringify(result) }))
    if (binding.streamKey) deps.bus.publish(binding.streamKey, { type: 'tool_result', id: p.callId, name: p.name, status, result })
    return { type: 'tool.done', callId: p.callId, ...(p.key ? { key: p.key } : {}), status, result, at: new Date().toISOString() }
  }
  // Given up on: what an attempt reserved for an operation it never started is given back.
  handler.giveUp = (effect) => releaseUnstartedOf(deps.tools, effect.accountId, effect.id)
  return handler
}

async function run(deps: ToolCallDeps, binding: ToolCallBinding, p: ToolCallParams, call: { callId: string; parent: ParentBinding }): Promise<ToolOutcome> {
  const tool = deps.tools.find(p.name)
  if (!tool || !binding.granted.includes(p.name) || !(MODEL_SCOPES as readonly string[]).includes(tool.scope)) return refusal(new ToolNotGrantedError(p.name))
  let args: unknown
  try {
    args = p.arguments.trim() === '' ? {} : JSON.parse(p.arguments)
  } catch {
    return refusal(new ValidationError({ arguments: 'Must be a JSON object.' }, 'Invalid tool arguments.'))
  }
  return deps.tools.call(tool.name, args, { accountId: binding.accountId, agentId: binding.agentId, ...call })
}

const refusal = (err: ToolNotGrantedError | ValidationError): ToolOutcome => ({
  ok: false,
  error: { error: err.message, code: err.code, ...(err.fieldErrors ? { fieldErrors: err.fieldErrors } : {}) },
  status: err.status,
})

import { z } from 'zod'
import { InsufficientCreditsError, ModelProviderError, ModelProviderNotConfiguredError, ServiceError } from '../../domain/errors.ts'
import type { ModelMessage, ModelProvider, ModelRequest, ModelResult, ModelTool } from '../../domain/chat/ports.ts'
import type { CreditReservation, CreditsRepository, SqlWrite } from '../../domain/billing/ports.ts'
import { modelCallCredits, worstCaseCredits, type TokenPrices } from '../../domain/billing/modelCallCredits.ts'
import { estimateTokens } from '../../domain/chat/chatPrompt.ts'
import type { Model } from '../../adapters/llm/modelCatalog.ts'
import type { EffectHandler, EffectContext, EffectRow } from '../runtime/index.ts'
import type { ChatBus } from './chatBus.ts'

/** The model-call effect: one call to the provider, reserved before and billed once (ref = effect id). */
export const MODEL_CALL = 'chat.model'
export type ModelCallParams = { round: number }

const usage = z.object({ promptTokens: z.number(), completionTokens: z.number(), totalTokens: z.number() })
const toolCall = z.object({ id: z.string(), name: z.string(), arguments: z.string() })

/** What the model-call effect reports to its actor. */
export const modelCallEventSchema = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('model.done'),
    effectId: z.string(),
    content: z.string(),
    toolCalls: z.array(toolCall),
    model: z.string(),
    usage: usage.nullable(),
    credits: z.number().int(),
    /** When the answer arrived (absent in events stored before it was kept). */
    at: z.string().optional(),
  }),
  z.object({ type: z.literal('model.failed'), effectId: z.string(), error: z.object({ code: z.string(), message: z.string(), status: z.number() }) }),
  z.object({ type: z.literal(`${MODEL_CALL}.failed`), effectId: z.string(), error: z.string() }),
])

/** One model call as the caller (a chat turn, a run) describes it. */
export type ModelCallRequest = {
  accountId: string
  model: Model
  temperature: number | null
  /** Stream the provider and publish its text on the bus under this key (null: call at once). */
  streamKey: string | null
  /** The whole prompt: system, history, this turn's messages. */
  messages: ModelMessage[]
  tools: ModelTool[]
  /** The call's credits, held already under ref = the effect id (by its actor's creation): not held again. */
  held?: CreditReservation | undefined
}

/** What a model call holds before it is made: the worst case of its prompt plus the longest answer, at least 1. */
export function callCredits(req: { messages: readonly ModelMessage[]; tools: readonly ModelTool[]; model: TokenPrices }, maxTokens: number): number {
  return Math.max(1, worstCaseCredits({ promptTokens: estimateTokens(req.messages, req.tools), maxTokens }, req.model))
}

export type ModelCallDeps = {
  provider: ModelProvider
  credits: CreditsRepository
  bus: ChatBus
  /** Completion tokens asked for at most (CHAT_MAX_TOKENS): what is reserved for the answer. */
  maxTokens: number
  /** Builds the call from the effect (the caller's context, history, tools). */
  requestOf(effect: EffectRow, ctx: EffectContext): Promise<ModelCallRequest>
  /** A write made with the charge, in the same statement (the assistant message). */
  answerWrite?(effect: EffectRow, result: ModelResult): Promise<SqlWrite>
}

/**
 * The model-call effect handler. Before the call it reserves the worst case (the prompt's
 * estimate plus `maxTokens` at the model's prices) under ref = the effect id; the charge
 * (`model_usage`, from the provider's reported usage, or the reservation when none was reported)
 * is written in the transaction that records the result, so a call cut off by a crash is made
 * again and billed once. A provider refusal (502/503) or too few credits (402) is reported to
 * the actor as `model.failed` with the code; anything else is thrown and retried.
 */
export function createModelCallEffect(deps: ModelCallDeps): EffectHandler {
  const handler: EffectHandler = async (effect, ctx) => {
    const req = await deps.requestOf(effect, ctx)
    let reservation = req.held
    try {
      reservation ??= await deps.credits.reserve({ accountId: req.accountId, credits: callCredits(req, deps.maxTokens), ref: effect.id })
    } catch (err) {
      if (err instanceof InsufficientCreditsError) return failed(err)
      throw err
    }
    const request: ModelRequest = {
      model: req.model.providerModel,
      messages: req.messages,
      tools: req.tools.length > 0 ? req.tools : undefined,
      temperature: req.temperature ?? undefined,
      maxTokens: deps.maxTokens,
    }
    let result: ModelResult
    try {
      result = req.streamKey ? await streamed(deps, request, req.streamKey) : await deps.provider.complete(request)
    } catch (err) {
      if (err instanceof ModelProviderError || err instanceof ModelProviderNotConfiguredError) {
        ctx.finishWith((tx) => deps.credits.release(reservation, tx).then(() => {}))
        return failed(err)
      }
      throw err
    }
    const credits = result.usage ? modelCallCredits(result.usage, req.model) : reservation.credits
    if (deps.answerWrite) ctx.finishWith(await deps.answerWrite(effect, result))
    // Last: should the finish be a transaction, the account row stays locked from here to its commit.
    ctx.finishWith(deps.credits.settleWrite(reservation, { credits, ref: effect.id, kind: 'model_usage' }))
    return { type: 'model.done', content: result.content, toolCalls: result.toolCalls, model: result.model, usage: result.usage, credits, at: new Date().toISOString() }
  }
  // Given up on (every attempt threw, e.g. its finish could not be written): the reservation an
  // attempt made is given back with the final failure, not held for ever.
  handler.giveUp = (effect) => (tx) => deps.credits.releaseByRef({ accountId: effect.accountId, ref: effect.id }, tx).then(() => {})
  return handler
}

const failed = (err: ServiceError) => ({ type: 'model.failed', error: { code: err.code, message: err.message, status: err.status } })

/** Streams the provider, publishing each text delta on the bus as it arrives. */
async function streamed(deps: ModelCallDeps, request: ModelRequest, key: string): Promise<ModelResult> {
  for await (const ev of deps.provider.stream(request)) {
    if (ev.type === 'delta') deps.bus.publish(key, { type: 'delta', content: ev.content })
    else if (ev.type === 'done') return ev.result
  }
  throw new ModelProviderError({ providerStatus: null, reason: 'the stream ended without a result.' })
}

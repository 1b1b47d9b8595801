import type { Bound } from '../../domain/util/bound.ts'
import type { resolveAgentSkills } from '../../domain/skills/resolveAgentSkills.ts'
import type { ToolPort } from '../../domain/toolCall.types.ts'
import type { AgentRecord, AgentsRepository } from '../../domain/agents/ports.ts'
import type { CreditsRepository } from '../../domain/billing/ports.ts'
import { composePrompt } from '../../domain/chat/chatPrompt.ts'
import type { ChatMessagesRepository, ModelMessage, ModelProvider, ModelTool } from '../../domain/chat/ports.ts'
import type { Model } from '../../adapters/llm/modelCatalog.ts'
import type { EffectContext, EffectHandler, EffectRow } from '../runtime/index.ts'
import type { ChatBus } from './chatBus.ts'
import { callCredits, createModelCallEffect } from './modelCall.effects.ts'
import type { TokenPrices } from '../../domain/billing/modelCallCredits.ts'
import { stableUuid } from '../../domain/util/stableUuid.ts'
import { createToolCallEffect, type ToolResultParams } from './toolCall.effects.ts'
import { chatMessageInsert } from '../../adapters/db/chatMessages.repository.ts'

/** What the model-call and tool-call effects of a chat turn or a run are built from. */
export type ConversationEffectsDeps = {
  provider: ModelProvider
  credits: CreditsRepository
  agents: AgentsRepository
  messages: ChatMessagesRepository
  models: ReadonlyMap<string, Model>
  bus: ChatBus
  /** The core's skills (built after the runtime, which core needs, so handed in as a getter). */
  core(): { resolveAgentSkills: Bound<typeof resolveAgentSkills> }
  /** The tools a model may call. */
  tools: ToolPort
  maxTokens: number
}

/** A chat turn or a run as its effects see it (read from the actor's context). */
export type Conversation = {
  /** The turn or run id: messages are written under it, tool call ids are keyed by it. */
  id: string
  accountId: string
  agentId: string
  /** The catalog id of the model. */
  model: string
  temperature: number | null
  /** The tool names granted when it started. */
  tools: string[]
  /** The system prompt fixed when it started (undefined in one stored before it was kept: built from the agent then). */
  system?: string | undefined
  /** Its messages as the model sees them. */
  transcript: ModelMessage[]
  /** Where text deltas and tool events are published (a streaming chat turn), else null. */
  streamKey: string | null
  /** Credits its creation held for its first model call (see `firstCallHoldOf`), if any. */
  firstCallHold?: number | undefined
}

/**
 * The worst case of a conversation's first model call (its system prompt, its first message, its
 * tools, no history) as the model-call effect will hold it, and the hold's id for that call's
 * effect: a run holds them in its own insert, and its first call finds them held.
 */
export function firstCallHoldOf(toolPort: Pick<ToolPort, 'find'>, c: { system: string; firstMessage: string; tools: readonly string[]; model: TokenPrices & { contextWindow: number }; maxTokens: number }): number {
  // The prompt composed as the call will compose it (`requestOf` below), with no history.
  const tools = modelToolsOf(toolPort, c.tools)
  const messages = composePrompt({ system: c.system, history: [], turn: [{ role: 'user', content: c.firstMessage }], tools, contextWindow: c.model.contextWindow, maxTokens: c.maxTokens })
  return callCredits({ messages, tools, model: c.model }, c.maxTokens)
}

/** The id of the hold made for a model call's effect at its actor's creation. */
export const heldCallIdOf = (effectId: string) => stableUuid('model-call-hold', effectId)

/** How one kind (chat turn, run) differs: its effect names, its context, its prompt. */
export type ConversationKind = {
  /** For error messages ("chat turn", "run"). */
  label: string
  effects: { modelCall: string; toolCall: string; toolResult: string }
  conversationOf(context: unknown): Conversation
  /** Earlier messages of the agent for the prompt, newest first. */
  history(conversation: Conversation): Promise<ModelMessage[]>
  /** The system prompt from the agent and its skills' text (`resolveAgentSkills`), for a conversation stored without one. */
  systemPrompt(agent: AgentRecord, skills: string): string
}

/** The model tools of a list of tool names, in the registry's order. */
export function modelToolsOf(tools: Pick<ToolPort, 'find'>, names: readonly string[]): ModelTool[] {
  return names.flatMap((n) => {
    const t = tools.find(n)
    return t ? [{ name: t.name, description: t.description, parameters: t.parameters() }] : []
  })
}

/**
 * The model-call and tool-call effects of one kind of conversation, bound to its actor row: the
 * prompt from the agent, its skills, its history and the transcript; the assistant and tool
 * messages written with the effect's finish, under the conversation id; a tool call keyed by
 * its effect's id, so a retried call never moves funds twice and two calls never share an operation.
 */
export function createConversationEffects(deps: ConversationEffectsDeps, kind: ConversationKind): Record<string, EffectHandler> {
  // Read once per effect run, from the actor as the runtime holds it (no statement when it is
  // cached); the finish writes reuse what the handler read.
  const seen = new WeakMap<EffectRow, Conversation>()
  async function conversationOf(effect: EffectRow, ctx?: EffectContext): Promise<Conversation> {
    const cached = seen.get(effect)
    if (cached) return cached
    const actor = await ctx?.actor()
    if (!actor) throw new Error(`${kind.label} ${effect.actorId} not found`)
    const conversation = kind.conversationOf(actor.snapshot.context)
    seen.set(effect, conversation)
    return conversation
  }
  async function systemFromAgent(c: Conversation): Promise<string> {
    const agent = await deps.agents.getOwned(c.accountId, c.agentId)
    const { instructions } = await deps.core().resolveAgentSkills({ accountId: c.accountId, skills: agent.skills })
    return kind.systemPrompt(agent, instructions)
  }
  const messageOf = (c: Conversation) => ({ accountId: c.accountId, agentId: c.agentId, turnId: c.id })

  return {
    [kind.effects.modelCall]: createModelCallEffect({
      provider: deps.provider,
      credits: deps.credits,
      bus: deps.bus,
      maxTokens: deps.maxTokens,
      async requestOf(effect, ctx) {
        const c = await conversationOf(effect, ctx)
        const [system, history] = await Promise.all([c.system ?? systemFromAgent(c), kind.history(c)])
        const model = deps.models.get(c.model)
        if (!model) throw new Error(`model ${c.model} is not in the catalog`)
        const tools = modelToolsOf(deps.tools, c.tools)
        const messages = composePrompt({ system, history, turn: c.transcript, tools, contextWindow: model.contextWindow, maxTokens: deps.maxTokens })
        // The first call of a conversation whose creation held its credits (a run): held already.
        const first = (effect.params as { step?: number } | null)?.step === 1
        const held = first && c.firstCallHold ? { id: heldCallIdOf(effect.id), accountId: c.accountId, credits: c.firstCallHold, ref: effect.id } : undefined
        return { accountId: c.accountId, model, temperature: c.temperature, streamKey: c.streamKey, messages, tools, ...(held ? { held } : {}) }
      },
      async answerWrite(effect, result) {
        const c = await conversationOf(effect)
        return chatMessageInsert({ ...messageOf(c), key: `model:${effect.id}`, role: 'assistant', content: result.content, model: c.model, toolCalls: result.toolCalls })
      },
    }),
    [kind.effects.toolCall]: createToolCallEffect({
      tools: deps.tools,
      bus: deps.bus,
      async bindingOf(effect, ctx) {
        const c = await conversationOf(effect, ctx)
        return { accountId: c.accountId, agentId: c.agentId, granted: c.tools, callKey: (id) => `${c.id}/${id}`, streamKey: c.streamKey }
      },
      async resultWrite(effect, view) {
        const c = await conversationOf(effect)
        return chatMessageInsert({ ...messageOf(c), key: view.messageKey, role: 'tool', content: view.content, model: null, toolCallId: view.callId })
      },
    }),
    // A call that started a child (a swap) is answered when the child ends: its tool message is written then.
    async [kind.effects.toolResult](effect, ctx) {
      const p = effect.params as ToolResultParams
      const c = await conversationOf(effect, ctx)
      const content = JSON.stringify(p.result)
      ctx.finishWith(chatMessageInsert({ ...messageOf(c), key: p.messageKey, role: 'tool', content, model: null, toolCallId: p.callId }))
      if (c.streamKey) deps.bus.publish(c.streamKey, { type: 'tool_result', id: p.callId, name: p.name, status: p.status, result: p.result })
      return null
    },
  }
}

import type pg from 'pg'
import type { Core } from '../core.ts'
import type { AgentsRepository } from '../domain/agents/ports.ts'
import type { CreditsRepository } from '../domain/billing/ports.ts'
import { composePrompt, systemPromptOf } from '../domain/chat/chatPrompt.ts'
import type { ChatMessagesRepository, ModelProvider, ModelTool } from '../domain/chat/ports.ts'
import type { Model } from '../llm/modelCatalog.ts'
import { toolJsonSchema } from '../tools/callTool.ts'
import { findTool } from '../tools/registry.ts'
import type { EffectHandler, EffectRow } from './actorKind.ts'
import type { ChatBus } from './chatBus.ts'
import type { ChatTurnContext } from './chatTurn.machine.ts'
import { createModelCallEffect, MODEL_CALL } from './modelCall.effect.ts'
import { createToolCallEffect, TOOL_CALL } from './toolCall.effect.ts'

export type ChatTurnEffectsDeps = {
  pool: pg.Pool
  provider: ModelProvider
  credits: CreditsRepository
  agents: AgentsRepository
  messages: ChatMessagesRepository
  models: ReadonlyMap<string, Model>
  bus: ChatBus
  /** Built after the runtime (core needs it), so handed in as a getter. */
  core(): Core
  maxTokens: number
  /** Earlier messages read for the prompt at most (then bounded by the context window). */
  historyLimit: number
}

/** The model tools of a list of tool names, in the registry's order. */
export function modelToolsOf(names: readonly string[]): ModelTool[] {
  return names.flatMap((n) => {
    const t = findTool(n)
    return t ? [{ name: t.name, description: t.description, parameters: toolJsonSchema(t) }] : []
  })
}

/** The chat turn's effects: its model calls and its tool calls, reading the turn from its actor row. */
export function createChatTurnEffects(deps: ChatTurnEffectsDeps): Record<string, EffectHandler> {
  // Read once per effect run: the finish writes reuse what the handler read. A finish write that
  // must read reads through its own transaction: a second pooled connection per finishing effect
  // can exhaust the pool when many finish at once.
  const seen = new WeakMap<EffectRow, ChatTurnContext>()
  async function turnOf(effect: EffectRow, q: Pick<pg.PoolClient, 'query'> = deps.pool): Promise<ChatTurnContext> {
    const cached = seen.get(effect)
    if (cached) return cached
    const { rows } = await q.query<{ ctx: ChatTurnContext }>(`select snapshot->'context' as ctx from actor where id = $1`, [effect.actorId])
    if (!rows[0]) throw new Error(`chat turn ${effect.actorId} not found`)
    seen.set(effect, rows[0].ctx)
    return rows[0].ctx
  }
  const model = (id: string) => {
    const m = deps.models.get(id)
    if (!m) throw new Error(`model ${id} is not in the catalog`)
    return m
  }

  return {
    [MODEL_CALL]: createModelCallEffect({
      provider: deps.provider,
      credits: deps.credits,
      bus: deps.bus,
      maxTokens: deps.maxTokens,
      async requestOf(effect) {
        const turn = await turnOf(effect)
        const [agent, history] = await Promise.all([
          deps.agents.getOwned(turn.accountId, turn.agentId),
          deps.messages.history(turn.agentId, turn.turnId, deps.historyLimit),
        ])
        const { instructions: skills } = await deps.core().resolveAgentSkills({ accountId: turn.accountId, skills: agent.skills })
        const tools = modelToolsOf(turn.tools)
        const m = model(turn.model)
        const messages = composePrompt({
          system: systemPromptOf({ agentName: agent.name, systemPrompt: agent.systemPrompt, skills }),
          history,
          turn: turn.transcript,
          tools,
          contextWindow: m.contextWindow,
          maxTokens: deps.maxTokens,
        })
        return { accountId: turn.accountId, model: m, temperature: turn.temperature, streamKey: turn.stream ? turn.turnId : null, messages, tools }
      },
      async recordAnswer(effect, result, tx) {
        const turn = await turnOf(effect, tx)
        await deps.messages.insert(
          { accountId: turn.accountId, agentId: turn.agentId, turnId: turn.turnId, key: `model:${effect.id}`, role: 'assistant', content: result.content, model: turn.model, toolCalls: result.toolCalls },
          tx,
        )
      },
    }),
    [TOOL_CALL]: createToolCallEffect({
      core: deps.core,
      bus: deps.bus,
      async bindingOf(effect) {
        const turn = await turnOf(effect)
        return { accountId: turn.accountId, agentId: turn.agentId, granted: turn.tools, callKey: (id) => `${turn.turnId}/${id}`, streamKey: turn.stream ? turn.turnId : null }
      },
      async recordResult(effect, view, tx) {
        const turn = await turnOf(effect, tx)
        await deps.messages.insert(
          { accountId: turn.accountId, agentId: turn.agentId, turnId: turn.turnId, key: `tool:${view.callId}`, role: 'tool', content: view.content, model: null, toolCallId: view.callId },
          tx,
        )
      },
    }),
  }
}

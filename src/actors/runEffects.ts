import type pg from 'pg'
import type { Core } from '../core.ts'
import type { AgentsRepository } from '../domain/agents/ports.ts'
import type { CreditsRepository } from '../domain/billing/ports.ts'
import { composePrompt, systemPromptOf } from '../domain/chat/chatPrompt.ts'
import type { ChatMessagesRepository, ModelProvider } from '../domain/chat/ports.ts'
import type { Model } from '../llm/modelCatalog.ts'
import type { EffectHandler, EffectRow } from './actorKind.ts'
import type { ChatBus } from './chatBus.ts'
import { modelToolsOf } from './chatTurnEffects.ts'
import { createModelCallEffect } from './modelCall.effect.ts'
import { RUN_MODEL_CALL, RUN_TOOL_CALL, type RunContext } from './run.machine.ts'
import { createToolCallEffect } from './toolCall.effect.ts'

export type RunEffectsDeps = {
  pool: pg.Pool
  provider: ModelProvider
  credits: CreditsRepository
  agents: AgentsRepository
  messages: ChatMessagesRepository
  models: ReadonlyMap<string, Model>
  bus: ChatBus
  core(): Core
  maxTokens: number
}

const RUN_PREAMBLE =
  'You are working on your own on the goal below, in steps: call the tools you need, read their results, and when the goal is reached ' +
  '(or cannot be), answer with a short summary and no tool call. Nobody answers questions during a run.'

/**
 * A run's effects: the chat turn's model-call and tool-call handlers (billed once per model
 * call, a fund-moving tool's operation id derived from the run and tool call ids), bound to the
 * run's actor row. The assistant and tool messages are written under the run id as chat messages.
 */
export function createRunEffects(deps: RunEffectsDeps): Record<string, EffectHandler> {
  // Inside a finish write, read through its transaction: a second connection per finishing effect
  // would exhaust the pool when many finish at once (thousands of scheduled runs on one tick).
  async function runOf(effect: EffectRow, q: Pick<pg.PoolClient, 'query'> = deps.pool): Promise<RunContext> {
    const { rows } = await q.query<{ ctx: RunContext }>(`select snapshot->'context' as ctx from actor where id = $1`, [effect.actorId])
    if (!rows[0]) throw new Error(`run ${effect.actorId} not found`)
    return rows[0].ctx
  }
  return {
    [RUN_MODEL_CALL]: createModelCallEffect({
      provider: deps.provider,
      credits: deps.credits,
      bus: deps.bus,
      maxTokens: deps.maxTokens,
      async requestOf(effect) {
        const run = await runOf(effect)
        const agent = await deps.agents.getOwned(run.accountId, run.agentId)
        const skills = await deps.core().resolveAgentSkills({ accountId: run.accountId, skills: agent.skills })
        const tools = modelToolsOf(run.tools)
        const model = deps.models.get(run.model)
        if (!model) throw new Error(`model ${run.model} is not in the catalog`)
        const system = [RUN_PREAMBLE, systemPromptOf({ agentName: agent.name, systemPrompt: agent.systemPrompt, skills: skills.instructions })].join('\n\n')
        const messages = composePrompt({ system, history: [], turn: run.transcript, tools, contextWindow: model.contextWindow, maxTokens: deps.maxTokens })
        return { accountId: run.accountId, model, temperature: run.temperature, streamKey: null, messages, tools }
      },
      async recordAnswer(effect, result, tx) {
        const run = await runOf(effect, tx)
        await deps.messages.insert(
          { accountId: run.accountId, agentId: run.agentId, turnId: run.runId, key: `model:${effect.id}`, role: 'assistant', content: result.content, model: run.model, toolCalls: result.toolCalls },
          tx,
        )
      },
    }),
    [RUN_TOOL_CALL]: createToolCallEffect({
      core: deps.core,
      bus: deps.bus,
      async bindingOf(effect) {
        const run = await runOf(effect)
        return { accountId: run.accountId, agentId: run.agentId, granted: run.tools, callKey: (id) => `${run.runId}/${id}`, streamKey: null }
      },
      async recordResult(effect, view, tx) {
        const run = await runOf(effect, tx)
        await deps.messages.insert(
          { accountId: run.accountId, agentId: run.agentId, turnId: run.runId, key: `tool:${view.callId}`, role: 'tool', content: view.content, model: null, toolCallId: view.callId },
          tx,
        )
      },
    }),
  }
}

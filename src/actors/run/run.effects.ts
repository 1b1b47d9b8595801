import { runSystemPromptOf } from '../../domain/runs/runPrompt.ts'
import type { EffectHandler } from '../runtime/index.ts'
import { createConversationEffects, type ConversationEffectsDeps } from '../conversation/conversation.effects.ts'
import { RUN_MODEL_CALL, RUN_TOOL_CALL, RUN_TOOL_RESULT, type RunContext } from './run.machine.ts'

export type RunEffectsDeps = ConversationEffectsDeps

/**
 * A run's effects: the chat turn's model-call and tool-call handlers (billed once per model
 * call, a fund-moving tool's operation id derived from the run and tool call ids), bound to the
 * run's actor row, with no chat history. The assistant and tool messages are written under the
 * run id as chat messages.
 */
export function createRunEffects(deps: RunEffectsDeps): Record<string, EffectHandler> {
  return createConversationEffects(deps, {
    label: 'run',
    effects: { modelCall: RUN_MODEL_CALL, toolCall: RUN_TOOL_CALL, toolResult: RUN_TOOL_RESULT },
    conversationOf(context) {
      const run = context as RunContext
      return { ...run, id: run.runId, streamKey: null }
    },
    history: async () => [],
    systemPrompt: runSystemPromptOf,
  })
}

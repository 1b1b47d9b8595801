import { systemPromptOf } from '../../domain/chat/chatPrompt.ts'
import type { EffectHandler } from '../runtime/index.ts'
import type { ChatTurnContext } from './chatTurn.machine.ts'
import { createConversationEffects, type ConversationEffectsDeps } from '../conversation/conversation.effects.ts'
import { MODEL_CALL } from '../conversation/modelCall.effects.ts'
import { TOOL_CALL, TOOL_RESULT } from '../conversation/toolCall.effects.ts'

export type ChatTurnEffectsDeps = ConversationEffectsDeps & {
  /** Earlier messages read for the prompt at most (then bounded by the context window). */
  historyLimit: number
}

/** The chat turn's effects: its model calls (with the agent's chat history) and its tool calls, read from its actor row. */
export function createChatTurnEffects(deps: ChatTurnEffectsDeps): Record<string, EffectHandler> {
  return createConversationEffects(deps, {
    label: 'chat turn',
    effects: { modelCall: MODEL_CALL, toolCall: TOOL_CALL, toolResult: TOOL_RESULT },
    conversationOf(context) {
      const turn = context as ChatTurnContext
      return { ...turn, id: turn.turnId, streamKey: turn.stream ? turn.turnId : null }
    },
    history: (c) => deps.messages.history(c, c.id, deps.historyLimit),
    systemPrompt: systemPromptOf,
  })
}

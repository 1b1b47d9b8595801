import { coverRefusalOf, coversGuard } from '../../adapters/db/credits.repository.ts'
import { chatMessageInsert } from '../../adapters/db/chatMessages.repository.ts'
import type { ChatTurns, ChatTurnState } from '../../domain/chat/ports.ts'
import type { ActorEntry } from '../runtime/index.ts'
import type { ActorRuntime } from '../runtime/index.ts'
import { CHAT_TURN_FINAL, chatTurnKind, type ChatTurnContext, type ChatTurnInput } from './chatTurn.machine.ts'

/** The turn as the domain reads it, from its actor's entry (a compacted turn's context has no `turnId` nor `accountId`: the entry has them). */
function stateOf(entry: ActorEntry): ChatTurnState & { accountId: string } {
  const c = entry.snapshot.context as ChatTurnContext
  return {
    id: entry.id,
    accountId: entry.accountId,
    agentId: c.agentId,
    status: entry.status as ChatTurnState['status'],
    content: c.content,
    model: c.model,
    toolCalls: c.toolCalls,
    usage: c.usage,
    credits: c.credits,
    error: c.error,
  }
}

/**
 * Chat turns over the actor runtime: a turn is a `chatturn` actor whose id is the turn id,
 * created in one statement with the user message; waiting listens to its commits.
 */
export function createChatTurns({ runtime }: { runtime: ActorRuntime }): ChatTurns {
  return {
    async start(turn, { coverCredits } = {}) {
      const input: ChatTurnInput = turn
      const message = chatMessageInsert({ accountId: turn.accountId, agentId: turn.agentId, turnId: turn.turnId, key: 'user', role: 'user', content: turn.message, model: turn.model })
      const guard = coverCredits !== undefined ? coversGuard(turn.accountId, coverCredits) : undefined
      await runtime.create(chatTurnKind.kind, { id: turn.turnId, accountId: turn.accountId, input, alongside: message, guard }).catch((err: unknown) => {
        throw (coverCredits !== undefined && coverRefusalOf(err, coverCredits)) || err
      })
    },
    async wait(turnId, waitMs) {
      const entry = await runtime.waitFor(turnId, (e) => CHAT_TURN_FINAL.has(e.status), waitMs)
      return entry && entry.kind.kind === chatTurnKind.kind ? stateOf(entry) : undefined
    },
    async get(turnId) {
      const entry = await runtime.get(turnId)
      return entry && entry.kind.kind === chatTurnKind.kind ? stateOf(entry) : undefined
    },
  }
}

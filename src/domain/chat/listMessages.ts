import type { AgentsRepository } from '../agents/ports.ts'
import type { ListMessagesQuery } from './chat.schema.ts'
import type { ChatMessagesRepository } from './ports.ts'

/**
 * An agent's chat messages, newest first (`limit` default 20, at most 100), before an ISO time
 * when given; `hasMore` when older ones remain (pass the last `createdAt` as `before`).
 *
 * @example
 * const page = await listMessages({ agents, messages }, { accountId, agentId, query: { limit: 10 } })
 */
export async function listMessages(
  deps: { agents: Pick<AgentsRepository, 'assertOwned'>; messages: ChatMessagesRepository },
  input: { accountId: string; agentId: string; query: ListMessagesQuery },
) {
  await deps.agents.assertOwned(input.accountId, input.agentId)
  const { limit, before } = input.query
  const rows = await deps.messages.list(input.agentId, { limit: limit + 1, before: before ? new Date(before) : undefined })
  return {
    messages: rows.slice(0, limit).map(({ cursorAt: _, toolCallId: __, ...m }) => m),
    hasMore: rows.length > limit,
  }
}

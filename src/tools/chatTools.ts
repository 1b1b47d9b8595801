import { z } from 'zod'
import { chatRequestSchema } from '../domain/chat/chat.schema.ts'
import { defineTool } from './tool.ts'

/**
 * Chat with an agent from outside (an MCP client). These two are never granted by a skill, so a
 * chat turn's model never sees them: a model must not chat with itself.
 */
export const chatWithAgentTool = defineTool({
  name: 'chat_with_agent',
  description:
    'Send the agent a message and get its answer (it may call its own tools, e.g. quote or swap, within its policy; ' +
    'the turn costs credits). Answers the turn: its reply, the tool calls it made and the credits charged; a turn ' +
    'still running after the wait answers { id, status }. Only for clients outside the agent: never offered to a model.',
  args: chatRequestSchema.omit({ stream: true }),
  scope: 'trade',
  movesFunds: false,
  run: async ({ core, accountId, agentId }, args) => {
    const { turnId } = await core.startChatTurn({ accountId, agentId, request: args })
    const outcome = await core.awaitChatTurn({ turnId })
    return outcome.done ? outcome.answer : outcome.pending
  },
})

export const getChatHistoryTool = defineTool({
  name: 'get_chat_history',
  description:
    "Read the agent's chat history, newest first: each message with its role, content and time. `limit` (1-100, " +
    'default 20) and `before` (an ISO time) page back. Only for clients outside the agent: never offered to a model.',
  args: z.strictObject({
    limit: z.number('An integer from 1 to 100.').int('An integer from 1 to 100.').min(1, 'An integer from 1 to 100.').max(100, 'An integer from 1 to 100.').optional(),
    before: z.iso.datetime({ offset: true, message: 'An ISO 8601 time.' }).optional(),
  }),
  scope: 'read',
  movesFunds: false,
  run: ({ core, accountId, agentId }, { limit, before }) =>
    core.listMessages({ accountId, agentId, query: { limit: limit ?? 20, before } }),
})

/** Tools no skill may grant (so no chat turn or run sees them). */
export const UNGRANTABLE_TOOLS: ReadonlySet<string> = new Set([chatWithAgentTool.name, getChatHistoryTool.name])

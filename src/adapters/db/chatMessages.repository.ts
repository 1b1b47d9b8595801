import { randomUUID } from 'node:crypto'
import type pg from 'pg'
import type { ChatMessage, ChatMessagesRepository, ModelMessage, NewChatMessage } from '../../domain/chat/ports.ts'
import { runSqlWrite, type SqlWrite } from '../../actors/runtime/index.ts'

type Row = {
  id: string
  role: ChatMessage['role']
  content: string
  model: string | null
  tool_calls: ChatMessage['toolCalls'] | null
  tool_call_id: string | null
  created_at: Date | string
  cursor_at: string
}

const messageOf = (r: Row): ChatMessage => ({
  id: r.id,
  role: r.role,
  content: r.content,
  model: r.model,
  ...(r.tool_calls?.length ? { toolCalls: r.tool_calls } : {}),
  ...(r.tool_call_id ? { toolCallId: r.tool_call_id } : {}),
  createdAt: new Date(r.created_at).toISOString(),
  cursorAt: r.cursor_at,
})

/** A turn's (or run's) messages as the runtime's compaction names them: `chat_message` rows whose `turn_id` is the actor's id. */
export const CHAT_MESSAGES_OF_TURN = { table: 'chat_message', column: 'turn_id', uuid: true } as const

/**
 * The statement that writes a message once per (turn, key); a chat turn or a run sends it in the
 * same statement as its actor's insert (`alongside`), a model's answer in the same statement as
 * the transition that records it.
 */
export function chatMessageInsert(m: NewChatMessage): SqlWrite {
  return {
    name: 'chat.message.insert',
    with: [{
      as: 'chat_msg',
      sql: `insert into chat_message (id, account_id, agent_id, turn_id, key, role, content, model, tool_calls, tool_call_id)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb, $10) on conflict (turn_id, key) do nothing`,
    }],
    values: [randomUUID(), m.accountId, m.agentId, m.turnId, m.key, m.role, m.content, m.model, m.toolCalls?.length ? JSON.stringify(m.toolCalls) : null, m.toolCallId ?? null],
  }
}

/**
 * Chat messages in SQL: written once per (turn, key) with `on conflict do nothing`, on the
 * caller's connection when it is inside the transaction that records the turn's progress.
 * Each message carries the account of the turn that wrote it, and is read only while that
 * account owns the agent: a sale deletes the history, and a turn of the seller's still running
 * at the sale writes under the seller's account, so none of it reaches the buyer's chat or its
 * model (nor the buyer's messages the seller's turn).
 */
export function createChatMessagesRepository(pool: pg.Pool): ChatMessagesRepository {
  return {
    async insert(m, tx = pool) {
      await runSqlWrite(tx, chatMessageInsert(m))
    },
    async list(agentId, { limit, before }) {
      const { rows } = await pool.query<Row>(
        `select id, role, content, model, tool_calls, tool_call_id, created_at, created_at::text as cursor_at from chat_message
          where agent_id = $1 and account_id = (select account_id from agent where id = $1)
            and ($2::timestamptz is null or created_at < $2) order by created_at desc, id desc limit $3`,
        [agentId, before ?? null, limit],
      )
      return rows.map(messageOf)
    },
    async history({ accountId, agentId }, turnId, limit) {
      const { rows } = await pool.query<{ role: 'user' | 'assistant'; content: string }>({
        name: 'chat.message.history',
        text: `select role, content from chat_message
          where agent_id = $1 and account_id = $4 and exists (select 1 from agent where id = $1 and account_id = $4)
            and turn_id <> $2 and role in ('user', 'assistant') and content <> ''
            and created_at < coalesce((select created_at from chat_message where turn_id = $2 and key = 'user'), now())
          order by created_at desc, id desc limit $3`,
        values: [agentId, turnId, limit, accountId],
      })
      return rows.map((r): ModelMessage => ({ role: r.role, content: r.content }))
    },
  }
}

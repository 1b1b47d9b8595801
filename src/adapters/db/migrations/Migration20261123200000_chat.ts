import { Migration } from '@mikro-orm/migrations'

/**
 * Chat messages: the user message, the assistant messages (with the tool calls they asked
 * for) and the tool results of each chat turn. Each is written once per (turn, key): the user
 * message with the turn, an assistant message with its model call's charge (key `model:<effect
 * id>`), a tool result with its tool call (key `tool:<call id>`), so a retried effect writes
 * nothing twice.
 */
export class Migration20261123200000_chat extends Migration {
  override name = 'Migration20261123200000_chat'
  override up(): void {
    this.addSql(`
create table chat_message (
  id uuid primary key,
  account_id uuid not null,
  agent_id uuid not null,
  turn_id uuid not null,
  key text not null,
  role text not null check (role in ('user', 'assistant', 'system', 'tool')),
  content text not null default '',
  model text,
  tool_calls jsonb,
  tool_call_id text,
  created_at timestamptz not null default clock_timestamp(),
  unique (turn_id, key)
);
create index chat_message_agent_created on chat_message (agent_id, created_at desc, id desc);
`)
  }

  override down(): void {
    this.addSql('drop table if exists chat_message;')
  }
}

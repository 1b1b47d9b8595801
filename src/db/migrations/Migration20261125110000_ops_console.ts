import { Migration } from '@mikro-orm/migrations'

/**
 * The operator console. A dead letter an operator retried or discarded keeps its row with the
 * resolution; the overview's counts each read a small partial index instead of a table
 * (measured in docs/benchmarks.md, "Operator overview"):
 * - dead letters not yet resolved, and actors by parent (an actor's children on its timeline);
 * - effects that failed for good; model usage and held credits;
 * - work per minute: actors and transactions by creation time.
 */
export class Migration20261125110000_ops_console extends Migration {
  override name = 'Migration20261125110000_ops_console'
  override up(): void {
    this.addSql(`
alter table actor_inbox add column resolved_at timestamptz, add column resolution text;
create index actor_inbox_dead_open on actor_inbox(actor_id, seq) where dead_at is not null and resolved_at is null;
create index actor_parent on actor(parent_id, created_at) where parent_id is not null;
create index actor_created on actor(created_at, kind);
create index effect_failed on effect(updated_at) where status = 'failed';
create index credit_entry_model_usage on credit_entry(created_at) include (credits) where kind = 'model_usage';
create index account_credits_reserved on account(id) include (credits_reserved) where credits_reserved > 0;
create index chain_tx_created on chain_tx(created_at);
`)
  }
}

import { Migration } from '@mikro-orm/migrations'

/**
 * The operator console: the overview's counts each read a small partial index instead of a table
 * (measured in docs/benchmarks.md, "Operator overview"): model usage and held credits, and
 * transactions by creation time. The runtime's part of the console (resolved dead letters, its
 * partial indexes, the actor counts kept by triggers) was made here too until the runtime owned
 * its schema: it is the runtime's own migrations now (src/actors/runtime/schema/baseline.ts).
 */
export class Migration20261125110000_ops_console extends Migration {
  override name = 'Migration20261125110000_ops_console'
  override up(): void {
    this.addSql(`
create index credit_entry_model_usage on credit_entry(created_at) include (credits) where kind = 'model_usage';
create index account_credits_reserved on account(id) include (credits_reserved) where credits_reserved > 0;
create index chain_tx_created on chain_tx(created_at);
`)
  }
}

import { Migration } from '@mikro-orm/migrations'

/**
 * The automations' trigger feed checkpoint: the last block whose launches and prices were
 * evaluated against the automations' `new_launch` and `price_threshold` triggers, per chain. The
 * feed evaluates every indexed block after it (after a restart or a failover too) and moves it
 * only once the triggers of those blocks are in the automations' inboxes. An existing deployment
 * starts from what the indexer had reached.
 */
export class Migration20261126120000_automation_triggers extends Migration {
  override name = 'Migration20261126120000_automation_triggers'
  override up(): void {
    this.addSql(`
create table automation_trigger_checkpoint (
  chain_id int primary key,
  block_number bigint not null,
  updated_at timestamptz not null default now()
);
insert into automation_trigger_checkpoint (chain_id, block_number) select chain_id, block_number from chain_checkpoint;
`)
  }

  override down(): void {
    this.addSql('drop table if exists automation_trigger_checkpoint;')
  }
}

import { Migration } from '@mikro-orm/migrations'

/**
 * Runs. A run is a `run` actor (its steps in the actor's snapshot, its messages in
 * chat_message under the run id); these indexes make the database refuse a second run not
 * ended for an agent, and list an agent's runs newest first.
 */
export class Migration20261123210000_runs extends Migration {
  override name = 'Migration20261123210000_runs'
  override up(): void {
    this.addSql(`
create unique index actor_run_one_active on actor ((snapshot->'context'->>'agentId')) where kind = 'run' and status in ('queued', 'running');
create index actor_run_agent on actor ((snapshot->'context'->>'agentId'), created_at desc, id desc) where kind = 'run';
`)
  }

  override down(): void {
    this.addSql('drop index if exists actor_run_one_active; drop index if exists actor_run_agent;')
  }
}

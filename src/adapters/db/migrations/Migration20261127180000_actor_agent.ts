import { Migration } from '@mikro-orm/migrations'

/**
 * Every actor that names an agent in its context (its wallet operations, launches, chat turns,
 * runs, automations), newest first: the operator console's list of an agent's operations and the
 * actors its timeline links to.
 */
export class Migration20261127180000_actor_agent extends Migration {
  override name = 'Migration20261127180000_actor_agent'
  override up(): void {
    this.addSql(`create index actor_named_agent on actor ((snapshot->'context'->>'agentId'), created_at desc, id desc) where snapshot->'context'->>'agentId' is not null;`)
  }

  override down(): void {
    this.addSql('drop index if exists actor_named_agent;')
  }
}

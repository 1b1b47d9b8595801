import { Migration } from '@mikro-orm/migrations'

/**
 * Automations. An automation is an `automation` actor (its definition and state in the actor's
 * snapshot); these indexes list an agent's automations newest first and find the armed ones by
 * trigger type on each new block. A wallet operation records the actor it was made for
 * (`parent_id`: a chat turn, a run, an automation), so an automation's lifetime spend is summed
 * under the agent's lock. The operator overview counts firings by their effect.
 */
export class Migration20261125110000_automations extends Migration {
  override name = 'Migration20261125110000_automations'
  override up(): void {
    this.addSql(`
create index actor_automation_agent on actor ((snapshot->'context'->>'agentId'), created_at desc, id desc) where kind = 'automation';
create index actor_automation_status on actor (status, (snapshot->'context'->'trigger'->>'type')) where kind = 'automation';
alter table wallet_op add column parent_id text;
create index wallet_op_parent on wallet_op (parent_id) where parent_id is not null;
create index effect_fire_created on effect (created_at) where kind = 'automation.fire';
`)
  }

  override down(): void {
    this.addSql('drop index if exists effect_fire_created; drop index if exists wallet_op_parent; alter table wallet_op drop column if exists parent_id; drop index if exists actor_automation_status; drop index if exists actor_automation_agent;')
  }
}

import { Migration } from '@mikro-orm/migrations'
import { contextIndexSql, effectKindIndexSql } from '../../../actors/runtime/index.ts'

/**
 * Automations. An automation is an `automation` actor (its definition and state in the actor's
 * snapshot); these indexes list an agent's automations newest first and find the armed ones by
 * trigger type on each new block. A wallet operation records the actor it was made for
 * (`parent_id`: a chat turn, a run, an automation), so an automation's lifetime spend is summed
 * under the agent's lock. The operator overview counts firings by their effect. The indexes on
 * the runtime's tables are written by the runtime (src/actors/runtime/schema/indexSql.ts) from what the
 * app's queries read.
 */
export class Migration20261125110000_automations extends Migration {
  override name = 'Migration20261125110000_automations'
  override up(): void {
    this.addSql(contextIndexSql({ name: 'actor_automation_agent', kind: 'automation', path: ['agentId'], newestFirst: true }))
    this.addSql(contextIndexSql({ name: 'actor_automation_status', kind: 'automation', leading: ['status'], path: ['trigger', 'type'] }))
    this.addSql(`
alter table wallet_op add column parent_id text;
create index wallet_op_parent on wallet_op (parent_id) where parent_id is not null;
`)
    this.addSql(effectKindIndexSql({ name: 'effect_fire_created', kind: 'automation.fire' }))
  }

  override down(): void {
    this.addSql('drop index if exists effect_fire_created; drop index if exists wallet_op_parent; alter table wallet_op drop column if exists parent_id; drop index if exists actor_automation_status; drop index if exists actor_automation_agent;')
  }
}

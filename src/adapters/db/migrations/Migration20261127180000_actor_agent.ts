import { Migration } from '@mikro-orm/migrations'
import { contextIndexSql } from '../../../actors/runtime/index.ts'

/**
 * Every actor that names an agent in its context (its wallet operations, launches, chat turns,
 * runs, automations), newest first: the operator console's list of an agent's operations and the
 * actors its timeline links to.
 */
export class Migration20261127180000_actor_agent extends Migration {
  override name = 'Migration20261127180000_actor_agent'
  override up(): void {
    this.addSql(contextIndexSql({ name: 'actor_named_agent', path: ['agentId'], newestFirst: true, where: [{ path: ['agentId'], is: 'set' }] }))
  }

  override down(): void {
    this.addSql('drop index if exists actor_named_agent;')
  }
}

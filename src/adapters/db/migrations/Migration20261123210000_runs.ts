import { Migration } from '@mikro-orm/migrations'
import { contextIndexSql } from '../../../actors/runtime/index.ts'

/**
 * Runs. A run is a `run` actor (its steps in the actor's snapshot, its messages in
 * chat_message under the run id); these indexes make the database refuse a second run not
 * ended for an agent, and list an agent's runs newest first.
 */
export class Migration20261123210000_runs extends Migration {
  override name = 'Migration20261123210000_runs'
  override up(): void {
    this.addSql(contextIndexSql({ name: 'actor_run_one_active', unique: true, kind: 'run', status: ['queued', 'running'], path: ['agentId'] }))
    this.addSql(contextIndexSql({ name: 'actor_run_agent', kind: 'run', path: ['agentId'], newestFirst: true }))
  }

  override down(): void {
    this.addSql('drop index if exists actor_run_one_active; drop index if exists actor_run_agent;')
  }
}

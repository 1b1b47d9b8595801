import { Migration } from '@mikro-orm/migrations'
import { contextIndexSql } from '../../../actors/runtime/index.ts'

/**
 * Drops `actor_run_agent`: `actor_named_agent` (Migration20261127180000_actor_agent) holds every
 * actor that names an agent, runs included, in the same order (agent, newest first), so the reads
 * of an agent's runs (its page of runs, its last scheduled run) take it with the kind as a filter,
 * and each run leaves one index entry fewer (about 190 bytes, kept for as long as its row).
 */
export class Migration20261207140000_run_agent_index extends Migration {
  override name = 'Migration20261207140000_run_agent_index'
  override up(): void {
    this.addSql('drop index if exists actor_run_agent;')
  }

  override down(): void {
    this.addSql(contextIndexSql({ name: 'actor_run_agent', kind: 'run', path: ['agentId'], newestFirst: true }))
  }
}

import { Migration } from '@mikro-orm/migrations'
import { contextIndexSql } from '../../../actors/runtime/index.ts'

/**
 * The runs an automation's `agent_prompt` firings started, by the automation's id (the run's
 * context `automationId`): its `max_spend_usd` check sums their money moves with its own.
 */
export class Migration20261126190000_run_automation extends Migration {
  override name = 'Migration20261126190000_run_automation'
  override up(): void {
    this.addSql(contextIndexSql({ name: 'actor_run_automation', kind: 'run', path: ['automationId'], where: [{ path: ['automationId'], is: 'set' }] }))
  }

  override down(): void {
    this.addSql('drop index if exists actor_run_automation;')
  }
}

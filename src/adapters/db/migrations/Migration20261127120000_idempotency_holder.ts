import { Migration } from '@mikro-orm/migrations'

/**
 * An in-flight idempotency key names its holder: the node (`service_node.id`) running the
 * request and the claim (one per request), so a key held by a node that is gone can be taken
 * over at once, and only the claim that holds a key completes or releases it.
 */
export class Migration20261127120000_idempotency_holder extends Migration {
  override name = 'Migration20261127120000_idempotency_holder'
  override up(): void {
    this.addSql(`alter table idempotency_key add column holder_node text, add column holder_claim uuid;`)
  }

  override down(): void {
    this.addSql(`alter table idempotency_key drop column holder_node, drop column holder_claim;`)
  }
}

import { Migration } from '@mikro-orm/migrations'

/**
 * `chain_tx.effective_gas_price`: the price per gas a mined transaction paid (from its receipt,
 * with `gas_used`; null before this migration and while unmined), so the operator console's
 * timeline shows the fee paid, written by a statement that already runs (no extra write). The
 * runtime's `actor_inbox.timer_due_at` was added here too until the runtime owned its schema
 * (src/actors/runtime/schema/baseline.ts).
 */
export class Migration20261126170000_ops_timeline extends Migration {
  override name = 'Migration20261126170000_ops_timeline'
  override up(): void {
    this.addSql('alter table chain_tx add column effective_gas_price numeric(78);')
  }

  override down(): void {
    this.addSql('alter table chain_tx drop column if exists effective_gas_price;')
  }
}

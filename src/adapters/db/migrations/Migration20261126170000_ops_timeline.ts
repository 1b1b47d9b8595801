import { Migration } from '@mikro-orm/migrations'

/**
 * What the operator console's timeline shows and could not before, each written by a statement
 * that already runs (no extra write):
 * - `actor_inbox.timer_due_at`: when a fired timer was due (set as the timer is claimed into the
 *   inbox; null for timers that fired before this migration and for every other inbox row);
 * - `chain_tx.effective_gas_price`: the price per gas a mined transaction paid (from its receipt,
 *   with `gas_used`; null before this migration and while unmined), so the fee paid is known.
 */
export class Migration20261126170000_ops_timeline extends Migration {
  override name = 'Migration20261126170000_ops_timeline'
  override up(): void {
    this.addSql(`
alter table actor_inbox add column timer_due_at timestamptz;
alter table chain_tx add column effective_gas_price numeric(78);
create index actor_inbox_timer_fired on actor_inbox(actor_id, seq) where timer_key is not null;
`)
  }

  override down(): void {
    this.addSql('drop index if exists actor_inbox_timer_fired; alter table actor_inbox drop column if exists timer_due_at; alter table chain_tx drop column if exists effective_gas_price;')
  }
}

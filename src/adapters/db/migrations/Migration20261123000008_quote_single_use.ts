import { Migration } from '@mikro-orm/migrations'

/** A quote executes once: the swap that used it is recorded on the quote, set only while unset. */
export class Migration20261123000008_quote_single_use extends Migration {
  override name = 'Migration20261123000008_quote_single_use'

  override up(): void {
    this.addSql('alter table swap_quote add column used_by uuid;')
  }
}

import { Migration } from '@mikro-orm/migrations'

/**
 * The database's size, sampled once a minute by whichever node writes the minute first
 * (src/adapters/db/databaseSize.store.ts): the operator overview's and `/metrics`' growth over the
 * last hour is read from it. Two days are kept.
 */
export class Migration20261207000000_database_size extends Migration {
  override name = 'Migration20261207000000_database_size'
  override up(): void {
    this.addSql(`create table if not exists database_size_sample (at timestamptz primary key, bytes bigint not null)`)
  }
}

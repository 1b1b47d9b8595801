import { Migration } from '@mikro-orm/migrations'

/**
 * Swap quotes live 30 seconds. An unlogged table skips the WAL, so storing a quote no longer
 * waits for a disk flush (it was most of a quote's tail latency). What is given up: after a
 * Postgres crash (not a service restart, not a clean Postgres restart) the table comes back
 * empty, and executing with a quoteId from before the crash answers `quote_expired`; the client
 * quotes again. Nothing that moves money is kept here.
 */
export class Migration20261122000006_quotes_unlogged extends Migration {
  override name = 'Migration20261122000006_quotes_unlogged'

  override up(): void {
    this.addSql('alter table swap_quote set unlogged;')
  }
}

import { Migration } from '@mikro-orm/migrations'

/** Swap quotes: kept in Postgres so that a quote survives a restart and works on any node. */
export class Migration20261122000005_quotes extends Migration {
  override name = 'Migration20261122000005_quotes'

  override up(): void {
    this.addSql(`
create table swap_quote (
  id uuid primary key,
  account_id uuid not null,
  data jsonb not null,
  expires_at timestamptz not null
);
create index swap_quote_expires on swap_quote(expires_at);
`)
  }
}

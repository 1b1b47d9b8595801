import { Migration } from '@mikro-orm/migrations'

/** Wallet operations (swaps, transfers, fee claims): a row per operation for listing and daily spend. */
export class Migration20261122000004_walletops extends Migration {
  override name = 'Migration20261122000004_walletops'

  override up(): void {
    this.addSql(`
create table wallet_op (
  id text primary key,
  account_id uuid not null,
  agent_id uuid not null,
  kind text not null,
  usd_value numeric(38, 6) not null default 0,
  created_at timestamptz not null default now()
);
create index wallet_op_agent on wallet_op(agent_id, created_at desc);
`)
  }
}

import { Migration } from '@mikro-orm/migrations'

/**
 * Tokens an agent wallet received by a plain ERC-20 transfer (from anyone), found by scanning
 * `Transfer` logs to the wallet, so the portfolio lists them. Rows are hints: balances are
 * always read on chain, so a reorged log costs one read of a zero balance, never a wrong figure.
 */
export class Migration20261123000007_received_tokens extends Migration {
  override name = 'Migration20261123000007_received_tokens'
  override up(): void {
    this.addSql(`
create table agent_received_token (
  agent_id uuid not null,
  token_address text not null,
  primary key (agent_id, token_address)
);
create table agent_transfer_scan (
  agent_id uuid primary key,
  scanned_block bigint not null
);
`)
  }
}

import { Migration } from '@mikro-orm/migrations'

/**
 * Transfers into agent wallets, for the PnL ledger (src/domain/wallet/pnlRules.ts): each ERC-20
 * `Transfer` log to an agent wallet and each plain ETH transaction to one (log index -1) that the
 * indexer saw in a transaction the wallet did not send itself, once per (chain, tx hash, log
 * index), with its USD value at its own block (null when the token had no market there).
 * Deleted above the common ancestor on a reorg, like the other indexed rows.
 */
export class Migration20261125130000_transfers_in extends Migration {
  override name = 'Migration20261125130000_transfers_in'
  override up(): void {
    this.addSql(`
create table agent_transfer_in (
  chain_id int not null,
  tx_hash text not null,
  log_index int not null,
  agent_id uuid not null,
  wallet text not null,
  token_address text not null,
  native boolean not null,
  from_address text not null,
  amount numeric not null check (amount > 0),
  usd_value numeric,
  block_number bigint not null,
  at timestamptz not null,
  primary key (chain_id, tx_hash, log_index)
);
create index agent_transfer_in_agent on agent_transfer_in(agent_id, block_number);
create index agent_transfer_in_block on agent_transfer_in(chain_id, block_number);
`)
  }
}

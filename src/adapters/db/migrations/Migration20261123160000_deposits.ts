import { Migration } from '@mikro-orm/migrations'

/**
 * Credit deposits. `deposit_address`: one custodial address per account, made on first request
 * (its key encrypted like an agent wallet's). `deposit`: each transfer to one of them that the
 * indexer saw, once per (chain, tx hash, log index; -1 for a plain ETH transfer); `pending` until
 * it has its confirmations, then `credited` with the ledger entry written in the same transaction.
 */
export class Migration20261123160000_deposits extends Migration {
  override name = 'Migration20261123160000_deposits'
  override up(): void {
    this.addSql(`
create table deposit_address (
  account_id uuid primary key references account(id) on delete cascade,
  address text not null unique,
  key_encrypted text not null,
  created_at timestamptz not null default now()
);

create table deposit (
  chain_id int not null,
  tx_hash text not null,
  log_index int not null,
  account_id uuid not null,
  address text not null,
  asset text not null check (asset in ('ETH', 'USDC')),
  amount numeric not null check (amount > 0),
  block_number bigint not null,
  block_hash text not null,
  status text not null default 'pending' check (status in ('pending', 'credited')),
  credits bigint,
  usd_value numeric,
  created_at timestamptz not null default now(),
  credited_at timestamptz,
  primary key (chain_id, tx_hash, log_index)
);
create index deposit_pending on deposit(chain_id, block_number) where status = 'pending';
create index deposit_account on deposit(account_id, created_at desc);
`)
  }
}

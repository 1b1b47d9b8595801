import { Migration } from '@mikro-orm/migrations'

/** Idempotency keys, the per-wallet transaction outbox and nonce counters, the chain indexer. */
export class Migration20261122000002_chain extends Migration {
  override name = 'Migration20261122000002_chain'

  override up(): void {
    this.addSql(`
create table idempotency_key (
  account_id uuid not null,
  route text not null,
  key text not null,
  fingerprint text not null,
  status text not null,
  response_status int,
  response_body jsonb,
  locked_until timestamptz not null,
  created_at timestamptz not null default now(),
  primary key (account_id, route, key)
);
create index idempotency_key_created on idempotency_key(created_at);

create table wallet_nonce (
  chain_id int not null,
  address text not null,
  next_nonce bigint not null,
  primary key (chain_id, address)
);

create table chain_tx (
  id text primary key,
  request_id text not null,
  account_id uuid not null,
  agent_id uuid,
  effect_id text,
  kind text not null,
  chain_id int not null,
  from_address text not null,
  to_address text,
  nonce bigint not null,
  raw text not null,
  hash text not null unique,
  max_fee_per_gas numeric(78) not null,
  max_priority_fee_per_gas numeric(78) not null,
  status text not null,
  replaced_by text,
  block_number bigint,
  block_hash text,
  gas_used numeric(78),
  contract_address text,
  error text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index chain_tx_wallet on chain_tx(chain_id, from_address, nonce);
create index chain_tx_open on chain_tx(status) where status in ('queued', 'broadcast');
create index chain_tx_agent on chain_tx(agent_id, created_at desc);
create index chain_tx_request on chain_tx(request_id, nonce);

create table chain_block (
  chain_id int not null,
  number bigint not null,
  hash text not null,
  primary key (chain_id, number)
);

create table chain_checkpoint (
  chain_id int primary key,
  block_number bigint not null
);

create table token (
  address text primary key,
  chain_id int not null,
  symbol text not null,
  name text not null,
  venue text not null,
  quote_symbol text not null,
  quote_address text not null,
  creator_address text not null,
  creator_agent_id uuid,
  launch_id text,
  pool_address text,
  graduated boolean not null default false,
  verified boolean not null default false,
  total_supply numeric(78) not null,
  description text,
  logo_url text,
  block_number bigint not null,
  tx_hash text not null,
  created_at timestamptz not null default now()
);
create index token_created on token(block_number desc, address);

create table trade (
  chain_id int not null,
  tx_hash text not null,
  log_index int not null,
  token_address text not null,
  venue text not null,
  trader text not null,
  side text not null,
  quote_amount numeric(78) not null,
  token_amount numeric(78) not null,
  creator_fee numeric(78) not null default 0,
  platform_fee numeric(78) not null default 0,
  ours boolean not null default false,
  block_number bigint not null,
  at timestamptz not null default now(),
  primary key (chain_id, tx_hash, log_index)
);
create index trade_token on trade(token_address, block_number desc, log_index desc);
`)
  }
}

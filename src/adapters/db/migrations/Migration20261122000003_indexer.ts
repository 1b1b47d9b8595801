import { Migration } from '@mikro-orm/migrations'

/**
 * The chain indexer: where each token was seen on chain and the parameters of its curve and pool,
 * market state snapshots (curve and pool reserves, price) and creator fee events, both kept per
 * log so that a reorg is undone by deleting rows above the common ancestor; trade fee asset and
 * price; outbox rows put back to `broadcast` by a reorg.
 */
export class Migration20261122000003_indexer extends Migration {
  override name = 'Migration20261122000003_indexer'

  override up(): void {
    this.addSql(`
alter table token
  add column indexed_block bigint,
  add column graduated_block bigint,
  add column curve_virtual_quote numeric(78),
  add column graduation_threshold numeric(78),
  add column pool_token_is_token0 boolean,
  add column pool_virtual_token numeric(78),
  add column pool_virtual_quote numeric(78);
create index token_chain_block on token(chain_id, block_number);
create index token_pool on token(pool_address) where pool_address is not null;

alter table trade
  add column source text not null default 'curve',
  add column fee_asset text not null default 'quote',
  add column price_after numeric(78);
create index trade_chain_block on trade(chain_id, block_number);
create index trade_token_at on trade(token_address, at);

create table token_snapshot (
  chain_id int not null,
  token_address text not null,
  block_number bigint not null,
  log_index int not null,
  source text not null,
  token_reserve numeric(78) not null,
  quote_reserve numeric(78) not null,
  price numeric(78) not null,
  primary key (chain_id, token_address, block_number, log_index)
);
create index token_snapshot_block on token_snapshot(chain_id, block_number);

create table creator_fee_event (
  chain_id int not null,
  tx_hash text not null,
  log_index int not null,
  token_address text not null,
  kind text not null,
  quote_amount numeric(78) not null default 0,
  token_amount numeric(78) not null default 0,
  block_number bigint not null,
  primary key (chain_id, tx_hash, log_index)
);
create index creator_fee_event_token on creator_fee_event(token_address);
create index creator_fee_event_block on creator_fee_event(chain_id, block_number);

alter table chain_tx
  add column reorged_at timestamptz,
  add column reorg_count int not null default 0;
create index chain_tx_mined on chain_tx(chain_id, block_number) where status in ('confirmed', 'failed');
`)
  }
}

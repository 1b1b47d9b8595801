import { Migration } from '@mikro-orm/migrations'

/**
 * Market intelligence (issue 22): each indexed trade keeps its quote asset's USD price at the
 * trade's block (`quote_usd`, usd18; null when the indexer could not read it), so candles,
 * volumes and cost bases are in the dollars of their block; anomalies are detected in the
 * indexer's block transaction and kept per block, so a reorg deletes them with the trades.
 * trade_token_at carries quote_amount, so a token's volume over a window is an index-only scan
 * (bench/intel.ts: the 24 h movers board over 1,000 tokens and 100,000 trades went from about
 * 300 ms to 60-100 ms).
 */
export class Migration20261125100000_market_intel extends Migration {
  override name = 'Migration20261125100000_market_intel'

  override up(): void {
    this.addSql(`
alter table trade add column quote_usd numeric(78);
drop index trade_token_at;
create index trade_token_at on trade(token_address, at) include (quote_amount);

create table market_anomaly (
  chain_id int not null,
  block_number bigint not null,
  key text not null,
  type text not null,
  mints text[] not null,
  description text not null,
  severity real not null,
  details jsonb not null,
  detected_at timestamptz not null,
  primary key (chain_id, key)
);
create index market_anomaly_block on market_anomaly(chain_id, block_number);
create index market_anomaly_at on market_anomaly(detected_at desc);
`)
  }

  override down(): void {
    this.addSql(`drop table if exists market_anomaly; alter table trade drop column if exists quote_usd;
drop index trade_token_at; create index trade_token_at on trade(token_address, at);`)
  }
}

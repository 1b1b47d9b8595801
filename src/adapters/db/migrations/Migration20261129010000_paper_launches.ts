import { Migration } from '@mikro-orm/migrations'

/**
 * Paper launches (docs/api.md, "Paper agents"): the virtual pool of each token a paper agent
 * launched (`paper_pool`, one per launch): the paper token's address (derived from the launch id,
 * src/domain/paper/paperAddress.ts: no contract), its quote asset and the pool's reserves and fee
 * as the launch opened it. Nothing of it is on chain; the agent's portfolio values a holding of
 * the token at the pool's price.
 */
export class Migration20261129010000_paper_launches extends Migration {
  override name = 'Migration20261129010000_paper_launches'
  override up(): void {
    this.addSql(`
create table paper_pool (
  token text primary key,
  launch_id text not null unique,
  agent_id uuid not null references agent (id) on delete cascade,
  venue text not null,
  symbol text not null,
  name text not null,
  quote_symbol text not null,
  quote_reserve numeric(78, 0) not null check (quote_reserve > 0),
  token_reserve numeric(78, 0) not null check (token_reserve > 0),
  fee_bps int not null,
  block_number bigint not null,
  created_at timestamptz not null default now()
);
create index paper_pool_agent on paper_pool (agent_id);`)
  }
}

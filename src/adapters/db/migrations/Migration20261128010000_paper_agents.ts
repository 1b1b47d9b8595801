import { Migration } from '@mikro-orm/migrations'

/**
 * Paper agents (docs/api.md, "Paper agents"): an agent's `mode` (`live` or `paper`, fixed at
 * creation), and a paper agent's virtual ledger: its balances per token (`paper_balance`, never
 * below zero), its virtual deposits (`paper_deposit`, valued in USD when made) and the simulated
 * fills of its wallet operations (`paper_fill`, one per operation: a retried fill finds it).
 */
export class Migration20261128010000_paper_agents extends Migration {
  override name = 'Migration20261128010000_paper_agents'
  override up(): void {
    this.addSql(`
alter table agent add column mode text not null default 'live' check (mode in ('live', 'paper'));

create table paper_balance (
  agent_id uuid not null references agent (id) on delete cascade,
  token text not null,
  amount numeric(78, 0) not null check (amount >= 0),
  primary key (agent_id, token)
);

create table paper_deposit (
  id uuid primary key,
  agent_id uuid not null references agent (id) on delete cascade,
  token text not null,
  amount numeric(78, 0) not null check (amount > 0),
  usd_value numeric,
  block_number bigint not null,
  created_at timestamptz not null default now()
);
create index paper_deposit_agent on paper_deposit (agent_id, created_at);

create table paper_fill (
  op_id text primary key,
  agent_id uuid not null references agent (id) on delete cascade,
  kind text not null,
  result jsonb not null,
  created_at timestamptz not null default now()
);`)
  }
}

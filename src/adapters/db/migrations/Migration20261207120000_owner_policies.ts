import { Migration } from '@mikro-orm/migrations'

/**
 * Owners' policies (docs/api.md, "Policies"): one per account (`account_policy`) and one per
 * agent (`agent_owner_policy`), each `{ rules }` as JSON, with the loosening waiting for its hold
 * (`pending`, applying by the database clock at `pending_effective_at`, as an agent's
 * `agent_pending_change` does). An agent's policy is dropped when the agent is sold (listings.repository.ts). A
 * `net_usd_window` criterion of the account sums the account's money moves over a window:
 * `wallet_op_account` serves it.
 */
export class Migration20261207120000_owner_policies extends Migration {
  override name = 'Migration20261207120000_owner_policies'
  override up(): void {
    this.addSql(`
create table account_policy (
  account_id uuid primary key references account(id) on delete cascade,
  policy jsonb not null,
  pending jsonb,
  pending_effective_at timestamptz,
  updated_at timestamptz not null default now()
);
create table agent_owner_policy (
  agent_id uuid primary key references agent(id) on delete cascade,
  policy jsonb not null,
  pending jsonb,
  pending_effective_at timestamptz,
  updated_at timestamptz not null default now()
);
create index wallet_op_account on wallet_op (account_id, created_at desc);
`)
  }

  override down(): void {
    this.addSql('drop index if exists wallet_op_account; drop table if exists agent_owner_policy; drop table if exists account_policy;')
  }
}

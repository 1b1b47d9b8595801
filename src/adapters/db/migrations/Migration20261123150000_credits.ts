import { Migration } from '@mikro-orm/migrations'

/**
 * Credits (1 credit = 0.001 USD). `credit_entry` is the append-only ledger; `account.credits` is
 * its running balance and `account.credits_reserved` the sum of open reservations, both changed
 * only under the account row's lock, so balance - reserved never goes below zero.
 */
export class Migration20261123150000_credits extends Migration {
  override name = 'Migration20261123150000_credits'
  override up(): void {
    this.addSql(`
alter table account add column credits_reserved bigint not null default 0;
alter table account add constraint account_credits_covered check (credits_reserved >= 0 and credits >= credits_reserved);

create table credit_entry (
  id uuid primary key,
  account_id uuid not null references account(id) on delete cascade,
  kind text not null check (kind in ('grant', 'deposit', 'model_usage', 'market_purchase', 'market_sale', 'market_fee', 'refund')),
  credits bigint not null,
  balance_after bigint not null check (balance_after >= 0),
  ref text not null,
  created_at timestamptz not null default clock_timestamp(),
  unique (kind, ref)
);
create index credit_entry_account on credit_entry(account_id, created_at desc, id desc);
create index credit_entry_account_kind on credit_entry(account_id, kind, created_at desc, id desc);

create table credit_reservation (
  id uuid primary key,
  account_id uuid not null references account(id) on delete cascade,
  credits bigint not null check (credits > 0),
  ref text not null,
  created_at timestamptz not null default now(),
  unique (account_id, ref)
);
`)
  }
}

import { Migration } from '@mikro-orm/migrations'

/**
 * The market (DESIGN §12): listings of agents for credits and the bids on them. One active
 * listing per agent (a partial unique index). A trigger on `wallet_op` is the database's last
 * word on "nothing moves a listed agent's funds, and nothing moves a sold agent's funds for its
 * former owner": every money move of an agent (swap, transfer, claim, launch seed) is recorded
 * there first, under the agent's advisory lock, which the sale takes too. The use cases refuse
 * earlier with a clear 409; the trigger covers a request that read the agent before the listing
 * or the sale committed.
 */
export class Migration20261125100000_market extends Migration {
  override name = 'Migration20261125100000_market'
  override up(): void {
    this.addSql(`
create table listing (
  id uuid primary key,
  agent_id uuid not null references agent(id),
  seller_account_id uuid not null references account(id),
  buyer_account_id uuid references account(id),
  price_credits bigint not null check (price_credits > 0),
  sale_credits bigint,
  fee_credits bigint,
  description text,
  status text not null default 'active' check (status in ('active', 'sold', 'cancelled')),
  created_at timestamptz not null default now(),
  ended_at timestamptz
);
create unique index listing_one_active on listing(agent_id) where status = 'active';
create index listing_active_price on listing(price_credits, id) where status = 'active';
create index listing_active_newest on listing(created_at desc, id desc) where status = 'active';
create index listing_seller on listing(seller_account_id, created_at desc, id desc);
create index listing_buyer on listing(buyer_account_id, created_at desc, id desc) where buyer_account_id is not null;

create table listing_bid (
  id uuid primary key,
  listing_id uuid not null references listing(id),
  bidder_account_id uuid not null references account(id),
  credits bigint not null check (credits > 0),
  status text not null default 'active' check (status in ('active', 'accepted', 'rejected', 'withdrawn', 'expired')),
  created_at timestamptz not null default now(),
  ended_at timestamptz
);
create index listing_bid_listing on listing_bid(listing_id, created_at desc, id desc);
create index listing_bid_bidder on listing_bid(bidder_account_id, created_at desc, id desc);

create function wallet_op_agent_guard() returns trigger language plpgsql as $$
declare
  owner uuid;
  listed uuid;
begin
  select account_id into owner from agent where id = new.agent_id;
  if owner is distinct from new.account_id then
    raise exception 'Agent % is not this account''s.', new.agent_id using errcode = 'ML404';
  end if;
  select id into listed from listing where agent_id = new.agent_id and status = 'active';
  if listed is not null then
    raise exception '%', listed using errcode = 'ML409';
  end if;
  return new;
end $$;
create trigger wallet_op_agent_guard before insert on wallet_op for each row execute function wallet_op_agent_guard();
`)
  }

  override down(): void {
    this.addSql(`
drop trigger if exists wallet_op_agent_guard on wallet_op;
drop function if exists wallet_op_agent_guard();
drop table if exists listing_bid;
drop table if exists listing;
`)
  }
}

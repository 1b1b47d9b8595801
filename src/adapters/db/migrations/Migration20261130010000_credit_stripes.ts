import { Migration } from '@mikro-orm/migrations'

/**
 * Holds without the account's row. Every run's first model call was held by an update of the
 * account row in the run's insert, and charged by another in the call's finish: two writes per
 * run on one row, each holding its lock through its commit's WAL flush, so one account carried
 * about 100-150 runs a second however many cores Postgres had (docs/benchmarks.md).
 *
 * Now an account's free credits are moved in chunks into `credit_stripe` rows (its escrow: still
 * counted in `account.credits_reserved`, so `credits >= credits_reserved` keeps holding), and a
 * hold takes room in a stripe no other transaction holds (`for update skip locked`): no wait, and
 * the account's row untouched. Only when no free stripe has room does a hold lock the account's
 * row (`credit_hold`'s slow path): it moves a chunk into a stripe, waits for a busy stripe's room,
 * or takes back what the stripes hold unused and holds on the account's row itself.
 *
 * The invariants: `account.credits_reserved` = the held credits of reservations with no stripe +
 * the stripes' escrow; a stripe's `held` = the credits of the reservations on it, never above its
 * escrow. `credits_unused(account)` is the escrow no reservation holds: the credits an account can
 * still spend are `credits - credits_reserved + credits_unused`, and what it holds for calls in
 * flight is `credits_held` (`credits_reserved - credits_unused`).
 *
 * Lock order: the account's row before its stripes', everywhere; the fast path of a hold locks a
 * stripe alone and never waits, and lets go of any stripe it locked before it waits for the
 * account's row (a subtransaction). `credit_reservation` loses its foreign key to `account`: its
 * check would take a share lock on the account's row at every hold (accounts are never deleted).
 */
export class Migration20261130010000_credit_stripes extends Migration {
  override name = 'Migration20261130010000_credit_stripes'
  override up(): void {
    this.addSql(`
create table credit_stripe (
  account_id uuid not null references account(id) on delete cascade,
  stripe smallint not null check (stripe >= 0),
  escrow bigint not null check (escrow >= 0),
  held bigint not null check (held >= 0),
  primary key (account_id, stripe),
  constraint credit_stripe_covered check (held <= escrow)
);
alter table credit_reservation add column stripe smallint;
alter table credit_reservation drop constraint if exists credit_reservation_account_id_fkey;

create or replace function credits_unused(p_account uuid) returns bigint language sql stable as $$
  select coalesce(sum(escrow - held), 0)::bigint from credit_stripe where account_id = p_account
$$;
-- What an account holds for calls in flight (its reserved credits less its stripes' unused escrow).
create or replace function credits_held(p_account uuid) returns bigint language sql stable as $$
  select credits_reserved - credits_unused(id) from account where id = p_account
$$;

create or replace function credit_hold(p_account uuid, p_credits bigint) returns smallint language plpgsql volatile as $$
declare
  s smallint;
  free bigint;
  chunk bigint;
  unused bigint;
begin
  -- A stripe with room that no other transaction holds: the account's row is not touched. In a
  -- block of its own (a subtransaction): a stripe locked and then found without room on its
  -- newest version stays locked otherwise, and a hold waiting for the account's row while it
  -- keeps a stripe would deadlock with a hold on the account's row waiting for that stripe.
  begin
    select stripe into s from credit_stripe
     where account_id = p_account and escrow - held >= p_credits order by stripe limit 1 for update skip locked;
    if found then
      update credit_stripe set held = held + p_credits where account_id = p_account and stripe = s;
      return s;
    end if;
    raise exception 'no stripe with room' using errcode = 'CR409';
  exception when sqlstate 'CR409' then
    null;
  end;
  select credits - credits_reserved into free from account where id = p_account for no key update;
  if free is null then
    raise exception 'no account %', p_account using errcode = 'CR404';
  end if;
  if free >= p_credits then
    -- A chunk of the free credits into a stripe no one holds (a new one while fewer than 16).
    chunk := least(free, greatest(p_credits * 16, free / 16));
    select stripe into s from credit_stripe where account_id = p_account order by escrow - held limit 1 for update skip locked;
    if found then
      update credit_stripe set escrow = escrow + chunk, held = held + p_credits where account_id = p_account and stripe = s;
    else
      select coalesce(max(stripe) + 1, 0) into s from credit_stripe where account_id = p_account;
      if s >= 16 then
        update account set credits_reserved = credits_reserved + p_credits where id = p_account;
        return null;
      end if;
      insert into credit_stripe (account_id, stripe, escrow, held) values (p_account, s, chunk, p_credits);
    end if;
    update account set credits_reserved = credits_reserved + chunk where id = p_account;
    return s;
  end if;
  -- Too little free: room in a stripe another transaction holds (waited for), else what the
  -- stripes hold unused, taken back, and the hold on the account's row.
  for s in select stripe from credit_stripe where account_id = p_account and escrow - held >= p_credits order by stripe loop
    update credit_stripe set held = held + p_credits where account_id = p_account and stripe = s and escrow - held >= p_credits;
    if found then return s; end if;
  end loop;
  unused := credits_unpark(p_account);
  if free + unused < p_credits then
    raise exception 'insufficient credits: % needed, % available', p_credits, free + unused
      using errcode = 'CR402', detail = (free + unused)::text;
  end if;
  update account set credits_reserved = credits_reserved - unused + p_credits where id = p_account;
  return null;
end
$$;

-- Takes back what an account's stripes hold unused, their locks waited for (the caller holds the
-- account's row), and answers how much. \`credits_unpark\` lowers the stripes' escrow only,
-- for a statement that writes the account's row itself; \`credits_reclaim\` lowers the account's
-- reserved credits by as much too.
create or replace function credits_unpark(p_account uuid) returns bigint language plpgsql volatile as $$
declare
  unused bigint := 0;
  r record;
begin
  -- Row by row, each locked as it is read: what it gives back is what its locked row held unused.
  for r in select stripe, escrow - held as spare from credit_stripe where account_id = p_account and escrow > held order by stripe for no key update loop
    update credit_stripe set escrow = held where account_id = p_account and stripe = r.stripe;
    unused := unused + r.spare;
  end loop;
  return unused;
end
$$;

create or replace function credits_reclaim(p_account uuid) returns bigint language plpgsql volatile as $$
declare unused bigint := credits_unpark(p_account);
begin
  if unused > 0 then
    update account set credits_reserved = credits_reserved - unused where id = p_account;
  end if;
  return unused;
end
$$;

-- A charge that overran its hold and the free credits (the caller holds the account's row): what
-- every stripe holds unused is taken back, and the hold's own stripe (\`p_stripe\`, null for a hold
-- on the account's row) gives up the hold's escrow with it. Answers what was taken back.
create or replace function credits_settle_over(p_account uuid, p_stripe smallint, p_held bigint) returns bigint language plpgsql volatile as $$
declare back bigint := credits_unpark(p_account);
begin
  if p_stripe is not null then
    update credit_stripe set held = held - p_held, escrow = escrow - p_held where account_id = p_account and stripe = p_stripe;
  end if;
  return back;
end
$$;

create or replace function account_covers(account_id uuid, required bigint) returns boolean language plpgsql volatile as $$
declare available bigint;
begin
  select credits - credits_reserved + credits_unused(a.id) into available from account a where a.id = account_id;
  if available is null or available < required then
    raise exception 'insufficient credits: % needed, % available', required, coalesce(available, 0)
      using errcode = 'CR402', detail = coalesce(available, 0)::text;
  end if;
  return true;
end
$$;

create or replace function account_event_credits_low() returns trigger language plpgsql as $fn$
declare
  threshold bigint := coalesce((select (value #>> '{}')::bigint from service_setting where key = 'credits_low_threshold'), 200);
begin
  if not (old.credits >= threshold and new.credits < threshold) then return null; end if;
  insert into account_event (id, account_id, type, resource_kind, resource_id, data)
  values ('evt_' || md5('credits.low:' || new.id || ':' || txid_current()), new.id, 'credits.low', 'account', new.id::text,
          jsonb_build_object('credits', new.credits, 'creditsReserved', new.credits_reserved - credits_unused(new.id), 'threshold', threshold))
  on conflict (id) do nothing;
  return null;
end
$fn$;
`)
  }
}

import { Migration } from '@mikro-orm/migrations'

/**
 * Charges without the account's row. Since the holds moved into stripes
 * (Migration20261130010000_credit_stripes), one account's runs were bounded by their charges: each
 * wrote the account's balance under its row's lock, held through the commit's WAL flush (about
 * 140 runs a second in one account, docs/benchmarks.md).
 *
 * Now a charge that its hold in a stripe covers spends that stripe's escrow: the stripe's `spent`
 * grows by it and the charge waits in `credit_pending` (its stripe's lock only, no account row). A
 * fold (`credits_fold`: a poller once a second, and the ledger's list before it reads) moves what
 * the stripes spent into the account's row (`credits` and `credits_reserved` fall by it, the
 * stripe's escrow too) and the pending charges into `credit_entry`, each with the balance after it
 * and the account's next `seq`. Every writer that changes `account.credits` holds the row's lock
 * and gives its entry the next `seq` (`account.ledger_seq`), so an account's ledger is one chain:
 * in `seq` order each entry's `balance_after` is the one before plus its credits, and the last is
 * `account.credits`. A pending charge is sequenced when it is folded, after any entry written
 * directly meanwhile (a grant, a sale, a charge on the account's row).
 *
 * The invariants (test/credits.test.ts): `account.credits` = the sum of `credit_entry`; a stripe's
 * `spent` = the credits of its pending charges, and `held + spent <= escrow`; the balance an
 * account has is `credits_balance` (`credits` less what is spent and not folded); free credits
 * (`credits - credits_reserved + credits_unused`) are exact at every moment, since a pending
 * charge is counted in both `credits` and the escrow in `credits_reserved` until folded.
 *
 * A fold takes the account's row, then the stripes it can (`skip locked`: one in use by a charge
 * is folded next time), so it never waits for a stripe and never deadlocks with a commit that
 * holds one stripe and wants another. For each stripe it took, every charge committed on it is
 * in both its `spent` and `credit_pending` (written in one statement under that stripe's lock).
 */
export class Migration20261207130000_credit_fold extends Migration {
  override name = 'Migration20261207130000_credit_fold'
  override up(): void {
    this.addSql(`
alter table credit_stripe add column spent bigint not null default 0 check (spent >= 0);
alter table credit_stripe drop constraint credit_stripe_covered;
alter table credit_stripe add constraint credit_stripe_covered check (held + spent <= escrow);

create table credit_pending (
  id uuid primary key,
  account_id uuid not null,
  stripe smallint not null,
  kind text not null,
  credits bigint not null check (credits <= 0),
  ref text not null,
  created_at timestamptz not null default clock_timestamp(),
  unique (kind, ref)
);
create index credit_pending_stripe on credit_pending(account_id, stripe);

alter table account add column ledger_seq bigint not null default 0;
alter table credit_entry add column seq bigint;
with o as (select id, row_number() over (partition by account_id order by created_at, id) as n from credit_entry)
update credit_entry e set seq = o.n from o where e.id = o.id;
update account a set ledger_seq = coalesce((select max(seq) from credit_entry e where e.account_id = a.id), 0);
alter table credit_entry alter column seq set not null;
create unique index credit_entry_account_seq on credit_entry(account_id, seq desc);
drop index credit_entry_account_kind;
create index credit_entry_account_kind on credit_entry(account_id, kind, seq desc);

-- The escrow no hold and no pending charge uses: the account's to spend.
create or replace function credits_unused(p_account uuid) returns bigint language sql stable as $$
  select coalesce(sum(escrow - held - spent), 0)::bigint from credit_stripe where account_id = p_account
$$;
-- What an account holds for calls in flight: its holds on its row and in its stripes.
create or replace function credits_held(p_account uuid) returns bigint language sql stable as $$
  select credits_reserved - (select coalesce(sum(escrow - held), 0) from credit_stripe where account_id = p_account)::bigint
    from account where id = p_account
$$;
-- The balance an account has: its row's less what its stripes spent and are not folded yet.
create or replace function credits_balance(p_account uuid) returns bigint language sql stable as $$
  select credits - (select coalesce(sum(spent), 0) from credit_stripe where account_id = p_account)::bigint
    from account where id = p_account
$$;

-- A hold's room in a stripe is what neither its holds nor its pending charges use.
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
     where account_id = p_account and escrow - held - spent >= p_credits order by stripe limit 1 for update skip locked;
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
    select stripe into s from credit_stripe where account_id = p_account order by escrow - held - spent limit 1 for update skip locked;
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
  for s in select stripe from credit_stripe where account_id = p_account and escrow - held - spent >= p_credits order by stripe loop
    update credit_stripe set held = held + p_credits where account_id = p_account and stripe = s and escrow - held - spent >= p_credits;
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

create or replace function credits_unpark(p_account uuid) returns bigint language plpgsql volatile as $$
declare
  unused bigint := 0;
  r record;
begin
  for r in select stripe, escrow - held - spent as spare from credit_stripe where account_id = p_account and escrow > held + spent order by stripe for no key update loop
    update credit_stripe set escrow = held + spent where account_id = p_account and stripe = r.stripe;
    unused := unused + r.spare;
  end loop;
  return unused;
end
$$;

-- A charge made before under (kind, ref), in the ledger or pending. Volatile, so its query reads
-- with a snapshot of its own: a settle whose delete of its reservation waited for another settle
-- of the same ref (\`p_after\`, what that delete answered, is read first) sees that one's charge.
create or replace function credits_charged(p_kind text, p_ref text, p_after bigint)
returns table (id uuid, account_id uuid, kind text, credits bigint, balance_after bigint, ref text, created_at timestamptz, cursor_at text, seq bigint)
language sql volatile as $$
  select id, account_id, kind, credits, balance_after, ref, created_at, created_at::text, seq from credit_entry where kind = p_kind and ref = p_ref
  union all
  select id, account_id, kind, credits, null, ref, created_at, created_at::text, null from credit_pending where kind = p_kind and ref = p_ref
$$;

-- Folds what the stripes it can lock spent into the account's row and their pending charges into
-- the ledger, in the order they were made. Answers how many charges it folded.
create or replace function credits_fold(p_account uuid) returns integer language plpgsql volatile as $$
declare
  bal bigint;
  seq0 bigint;
  taken smallint[];
  n integer;
  total bigint;
begin
  select credits, ledger_seq into bal, seq0 from account where id = p_account for no key update;
  if bal is null then return 0; end if;
  select array_agg(stripe) into taken from (
    select stripe from credit_stripe where account_id = p_account and spent > 0 order by stripe for no key update skip locked) s;
  if taken is null then return 0; end if;
  with moved as (
    delete from credit_pending where account_id = p_account and stripe = any(taken) returning id, kind, credits, ref, created_at
  ), ordered as (
    select m.*, row_number() over w as k, sum(credits) over w as running from moved m
    window w as (order by created_at, id rows unbounded preceding)
  ), ins as (
    insert into credit_entry (id, account_id, kind, credits, balance_after, ref, created_at, seq)
    select id, p_account, kind, credits, bal + running, ref, created_at, seq0 + k from ordered
    returning credits
  )
  select count(*), coalesce(sum(credits), 0) into n, total from ins;
  update credit_stripe set escrow = escrow - spent, spent = 0 where account_id = p_account and stripe = any(taken);
  if n > 0 then
    update account set credits = credits + total, credits_reserved = credits_reserved + total, ledger_seq = ledger_seq + n where id = p_account;
  end if;
  return n;
end
$$;

-- One batch of the accounts whose stripes hold unfolded charges, each folded; an account whose row
-- another transaction holds is skipped (that writer or the next sweep folds it). Answers how many
-- accounts it took (\`p_limit\`: there may be more).
create or replace function credits_fold_due(p_limit integer) returns integer language plpgsql volatile as $$
declare
  a uuid;
  n integer := 0;
begin
  for a in select s.account_id from (select distinct account_id from credit_stripe where spent > 0 limit p_limit) s
    join account on account.id = s.account_id for no key update of account skip locked loop
    perform credits_fold(a);
    n := n + 1;
  end loop;
  return n;
end
$$;

create or replace function account_event_credits_low() returns trigger language plpgsql as $fn$
declare
  threshold bigint := coalesce((select (value #>> '{}')::bigint from service_setting where key = 'credits_low_threshold'), 200);
begin
  if not (old.credits >= threshold and new.credits < threshold) then return null; end if;
  insert into account_event (id, account_id, type, resource_kind, resource_id, data)
  values ('evt_' || md5('credits.low:' || new.id || ':' || txid_current()), new.id, 'credits.low', 'account', new.id::text,
          jsonb_build_object('credits', new.credits, 'creditsReserved', new.credits_reserved - (select coalesce(sum(escrow - held), 0) from credit_stripe where account_id = new.id), 'threshold', threshold))
  on conflict (id) do nothing;
  return null;
end
$fn$;
`)
  }
}

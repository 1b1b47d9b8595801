import { Migration } from '@mikro-orm/migrations'

/**
 * `credits.low` at a configured threshold (CREDITS_LOW_THRESHOLD, docs/operations.md) instead of
 * a constant 200: the trigger reads it from `service_setting` (a key and a JSON value, written by
 * each node as it starts, src/adapters/db/serviceSettings.store.ts). A trigger's WHEN cannot read
 * a table, so it fires on any fall of the balance and the function checks the crossing.
 */
export class Migration20261128032000_credits_low_setting extends Migration {
  override name = 'Migration20261128032000_credits_low_setting'
  override up(): void {
    this.addSql(`
create table service_setting (
  key text primary key,
  value jsonb not null,
  updated_at timestamptz not null default now()
);
create or replace function account_event_credits_low() returns trigger language plpgsql as $fn$
declare
  threshold bigint := coalesce((select (value #>> '{}')::bigint from service_setting where key = 'credits_low_threshold'), 200);
begin
  if not (old.credits >= threshold and new.credits < threshold) then return null; end if;
  insert into account_event (id, account_id, type, resource_kind, resource_id, data)
  values ('evt_' || md5('credits.low:' || new.id || ':' || txid_current()), new.id, 'credits.low', 'account', new.id::text,
          jsonb_build_object('credits', new.credits, 'creditsReserved', new.credits_reserved, 'threshold', threshold))
  on conflict (id) do nothing;
  return null;
end
$fn$;
drop trigger if exists account_event_credits_low on account;
create trigger account_event_credits_low after update of credits on account for each row
  when (new.credits < old.credits) execute function account_event_credits_low();
`)
  }

  override down(): void {
    this.addSql(`
drop trigger if exists account_event_credits_low on account;
create or replace function account_event_credits_low() returns trigger language plpgsql as $fn$
begin
  insert into account_event (id, account_id, type, resource_kind, resource_id, data)
  values ('evt_' || md5('credits.low:' || new.id || ':' || txid_current()), new.id, 'credits.low', 'account', new.id::text,
          jsonb_build_object('credits', new.credits, 'creditsReserved', new.credits_reserved, 'threshold', 200))
  on conflict (id) do nothing;
  return null;
end
$fn$;
create trigger account_event_credits_low after update of credits on account for each row
  when (old.credits >= 200 and new.credits < 200) execute function account_event_credits_low();
drop table if exists service_setting;
`)
  }
}

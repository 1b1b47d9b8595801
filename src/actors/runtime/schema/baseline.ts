/*
 * The runtime's schema as the service's migrations left it up to Migration20261129010000 (the
 * last one to change it was Migration20261127000000_commit_refused), written so that it brings a
 * database at any earlier point to that shape: every statement is a no-op where its object
 * exists already (`if not exists`, `create or replace`, a trigger dropped then created). A
 * database an older build migrated holds some of the runtime's tables, made by the service's
 * migrations, and no record of this one; it runs once there and leaves what exists as it is.
 * The parts are in the order the service's migrations made them (named in each comment), so a
 * fresh database gets its columns in the same order as before. Function bodies are kept to the
 * character: Postgres keeps a body as written, and the schema test compares them as text.
 */

/** `Migration20261122000001_init`: actors, their inboxes, timers, effects and journal. */
const INIT = `
create table if not exists actor (
  id text primary key,
  kind text not null,
  account_id uuid not null,
  machine_version int not null,
  status text not null,
  state_value jsonb not null,
  snapshot jsonb not null,
  timers jsonb not null default '{}',
  version bigint not null,
  owner_epoch bigint not null default 0,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index if not exists actor_kind_status on actor(kind, status);
create index if not exists actor_account on actor(account_id);

create table if not exists actor_inbox (
  seq bigserial primary key,
  actor_id text not null,
  account_id uuid not null,
  event jsonb not null,
  dedupe_key text unique,
  timer_key text,
  timer_generation bigint,
  created_at timestamptz not null default now(),
  processed_at timestamptz
);
create index if not exists actor_inbox_pending on actor_inbox(actor_id, seq) where processed_at is null;

create table if not exists actor_timer (
  actor_id text not null,
  timer_key text not null,
  account_id uuid not null,
  generation bigint not null,
  due_at timestamptz not null,
  event jsonb not null,
  primary key (actor_id, timer_key)
);
create index if not exists actor_timer_due on actor_timer(due_at);

create table if not exists effect (
  id text primary key,
  actor_id text not null,
  account_id uuid not null,
  kind text not null,
  params jsonb not null,
  status text not null,
  external_ref text,
  result jsonb,
  attempts int not null default 0,
  last_error text,
  next_attempt_at timestamptz not null default now(),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index if not exists effect_open on effect(next_attempt_at) where status in ('pending', 'prepared', 'sent');
create index if not exists effect_actor on effect(actor_id);

create table if not exists actor_journal (
  actor_id text not null,
  seq bigint not null,
  account_id uuid not null,
  event jsonb not null,
  state_value jsonb not null,
  at timestamptz not null default now(),
  primary key (actor_id, seq)
);
`

/** `Migration20261123120000_effect_lease`: effect leases, parent actors, dead letters and stuck actors. */
const LEASES = `
alter table effect add column if not exists claimed_by text, add column if not exists lease_until timestamptz;
alter table actor add column if not exists parent_id text, add column if not exists stuck_reason text, add column if not exists stuck_at timestamptz;
create index if not exists actor_stuck on actor(id) where stuck_at is not null;
alter table actor_inbox add column if not exists dead_at timestamptz, add column if not exists error text;
`

/**
 * `Migration20261125110000_ops_console`: resolved dead letters, the inspection's partial indexes,
 * and the actor counts kept by triggers. The totals are filled from the table only when they are
 * made: where they exist, the triggers have kept them (a second fill would count every actor
 * twice). The table is locked against writes until the triggers are in place, in this transaction.
 */
const OPS = `
alter table actor_inbox add column if not exists resolved_at timestamptz, add column if not exists resolution text;
create index if not exists actor_inbox_dead_open on actor_inbox(actor_id, seq) where dead_at is not null and resolved_at is null;
create index if not exists actor_parent on actor(parent_id, created_at) where parent_id is not null;
create index if not exists actor_created on actor(created_at, kind);
create index if not exists effect_failed on effect(updated_at) where status = 'failed';

do $do$
begin
  if to_regclass('actor_count') is null then
    create table actor_count (kind text not null, status text not null, n bigint not null, primary key (kind, status));
    lock table actor in share mode;
    insert into actor_count select kind, status, count(*) from actor group by kind, status;
  end if;
end
$do$;
create table if not exists actor_count_delta (kind text not null, status text not null, n int not null);
create or replace function actor_count_track() returns trigger language plpgsql as $fn$
begin
  if tg_op in ('UPDATE', 'DELETE') then insert into actor_count_delta values (old.kind, old.status, -1); end if;
  if tg_op in ('UPDATE', 'INSERT') then insert into actor_count_delta values (new.kind, new.status, 1); end if;
  return null;
end
$fn$;
drop trigger if exists actor_count_insert on actor;
drop trigger if exists actor_count_update on actor;
drop trigger if exists actor_count_delete on actor;
create trigger actor_count_insert after insert on actor for each row execute function actor_count_track();
create trigger actor_count_update after update of status on actor for each row
  when (old.status is distinct from new.status) execute function actor_count_track();
create trigger actor_count_delete after delete on actor for each row execute function actor_count_track();
`

/** `Migration20261125130000_shards`: the actor's shard, the node registry, the shard and role leases. */
const SHARDS = `
create or replace function actor_shard(id text) returns smallint language plpgsql immutable strict parallel safe as $fn$
declare
  b bytea := convert_to(id, 'UTF8');
  h bigint := 2166136261;
begin
  for i in 0 .. length(b) - 1 loop
    h := ((h # get_byte(b, i)) * 16777619) & 4294967295;
  end loop;
  return (h & 63)::smallint;
end
$fn$;
alter table actor add column if not exists shard smallint generated always as (actor_shard(id)) stored;
create index if not exists actor_shard_idx on actor(shard);

create table if not exists service_node (
  id text primary key,
  pid int not null,
  host text not null,
  process_started double precision not null,
  started_at timestamptz not null default now(),
  heartbeat_at timestamptz not null default now(),
  expires_at timestamptz not null,
  leaving boolean not null default false,
  stopped_at timestamptz
);
create table if not exists shard_lease (
  shard smallint primary key,
  owner text,
  epoch bigint not null default 0,
  expires_at timestamptz not null default '-infinity'
);
insert into shard_lease (shard) select generate_series(0, 63) on conflict (shard) do nothing;
create table if not exists role_lease (
  role text primary key,
  owner text,
  epoch bigint not null default 0,
  expires_at timestamptz not null default '-infinity'
);
`

/**
 * `Migration20261126170000_ops_timeline`, `Migration20261126180000_effect_attempt_log` and
 * `Migration20261127000000_commit_refused`: when a fired timer was due, an effect's retried
 * attempts, and the function that fails a statement whose transition a fence refused.
 */
const LATER = `
alter table actor_inbox add column if not exists timer_due_at timestamptz;
create index if not exists actor_inbox_timer_fired on actor_inbox(actor_id, seq) where timer_key is not null;
alter table effect add column if not exists attempt_log jsonb;
create or replace function actor_commit_refused() returns int language plpgsql volatile as $$
begin
  raise exception 'the actor''s transition was refused (version, inbox or effect lease fence)' using errcode = 'AR409';
end
$$;
`

/** The runtime's first migration: its whole schema, idempotent (see the top of this file). */
export const BASELINE_SQL = [INIT, LEASES, OPS, SHARDS, LATER].join('')

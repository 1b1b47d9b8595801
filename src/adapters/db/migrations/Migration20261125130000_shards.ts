import { Migration } from '@mikro-orm/migrations'

/**
 * Several nodes on one database. Every actor belongs to one of 64 shards by a hash of its id
 * (`actor_shard`, FNV-1a over the id's UTF-8 bytes; src/runtime/shards.ts computes the same in
 * TypeScript). A `shard_lease` row per shard names the node that polls it (its timers, its
 * leftover inbox rows, its open effects) until `expires_at`, on the database clock; `epoch`
 * counts the hand-overs. A `role_lease` row names the one node that does a job only one may do
 * (the chain indexer). A `service_node` row per running process is its heartbeat.
 */
export class Migration20261125130000_shards extends Migration {
  override name = 'Migration20261125130000_shards'
  override up(): void {
    this.addSql(`
create function actor_shard(id text) returns smallint language plpgsql immutable strict parallel safe as $fn$
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
alter table actor add column shard smallint generated always as (actor_shard(id)) stored;
create index actor_shard_idx on actor(shard);

create table service_node (
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
create table shard_lease (
  shard smallint primary key,
  owner text,
  epoch bigint not null default 0,
  expires_at timestamptz not null default '-infinity'
);
insert into shard_lease (shard) select generate_series(0, 63);
create table role_lease (
  role text primary key,
  owner text,
  epoch bigint not null default 0,
  expires_at timestamptz not null default '-infinity'
);
`)
  }
}

import { Migration } from '@mikro-orm/migrations'

/**
 * The operator console. A dead letter an operator retried or discarded keeps its row with the
 * resolution; the overview's counts each read a small partial index instead of a table
 * (measured in docs/benchmarks.md, "Operator overview"):
 * - dead letters not yet resolved, and actors by parent (an actor's children on its timeline);
 * - effects that failed for good; model usage and held credits;
 * - work per minute: actors and transactions by creation time.
 * Actors per kind and state are counted by triggers instead: scanning `actor_kind_status` costs
 * 10-25 ms of CPU per 100,000 actors on every overview. A status change appends a -1 and a +1
 * to `actor_count_delta` (an insert into an unindexed table: no shared row is locked, so
 * concurrent commits never wait on each other); `actor_count` holds the folded totals, and the
 * overview folds the deltas in when they pile up (src/adapters/db/opsOverview.store.ts).
 */
export class Migration20261125110000_ops_console extends Migration {
  override name = 'Migration20261125110000_ops_console'
  override up(): void {
    this.addSql(`
alter table actor_inbox add column resolved_at timestamptz, add column resolution text;
create index actor_inbox_dead_open on actor_inbox(actor_id, seq) where dead_at is not null and resolved_at is null;
create index actor_parent on actor(parent_id, created_at) where parent_id is not null;
create index actor_created on actor(created_at, kind);
create index effect_failed on effect(updated_at) where status = 'failed';
create index credit_entry_model_usage on credit_entry(created_at) include (credits) where kind = 'model_usage';
create index account_credits_reserved on account(id) include (credits_reserved) where credits_reserved > 0;
create index chain_tx_created on chain_tx(created_at);

create table actor_count (kind text not null, status text not null, n bigint not null, primary key (kind, status));
create table actor_count_delta (kind text not null, status text not null, n int not null);
create function actor_count_track() returns trigger language plpgsql as $fn$
begin
  if tg_op in ('UPDATE', 'DELETE') then insert into actor_count_delta values (old.kind, old.status, -1); end if;
  if tg_op in ('UPDATE', 'INSERT') then insert into actor_count_delta values (new.kind, new.status, 1); end if;
  return null;
end
$fn$;
create trigger actor_count_insert after insert on actor for each row execute function actor_count_track();
create trigger actor_count_update after update of status on actor for each row
  when (old.status is distinct from new.status) execute function actor_count_track();
create trigger actor_count_delete after delete on actor for each row execute function actor_count_track();
lock table actor in share mode;
insert into actor_count select kind, status, count(*) from actor group by kind, status;
`)
  }
}

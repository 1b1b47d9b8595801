import { Migration } from '@mikro-orm/migrations'

/**
 * What the actor runtime needs to run on several processes and to never lose an event quietly:
 * - effect leases: a worker claims an open effect (`claimed_by`, `lease_until`) and renews the
 *   lease while its handler runs; another worker takes the effect over only once it expired;
 * - parent and child actors: a child row names its parent, which hears of the child's end;
 * - dead letters: an inbox row that failed validation is kept, marked dead with its error, and
 *   its actor is marked stuck (`stuck_reason`, `stuck_at`) for an operator.
 */
export class Migration20261123120000_effect_lease extends Migration {
  override name = 'Migration20261123120000_effect_lease'
  override up(): void {
    this.addSql(`
alter table effect add column claimed_by text, add column lease_until timestamptz;
alter table actor add column parent_id text, add column stuck_reason text, add column stuck_at timestamptz;
create index actor_stuck on actor(id) where stuck_at is not null;
alter table actor_inbox add column dead_at timestamptz, add column error text;
`)
  }
}

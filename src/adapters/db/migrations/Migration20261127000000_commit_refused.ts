import { Migration } from '@mikro-orm/migrations'

/**
 * `actor_commit_refused()` fails the statement it is called in (SQLSTATE AR409). An effect's
 * outcome sent with other writes in one statement (src/runtime/actorStore.ts,
 * `commitTransitionWith`) calls it when a fence refused the transition, so the writes are not
 * made either.
 */
export class Migration20261127000000_commit_refused extends Migration {
  override name = 'Migration20261127000000_commit_refused'
  override up(): void {
    this.addSql(`create or replace function actor_commit_refused() returns int language plpgsql volatile as $$
begin
  raise exception 'the actor''s transition was refused (version, inbox or effect lease fence)' using errcode = 'AR409';
end
$$;`)
  }

  override down(): void {
    this.addSql('drop function if exists actor_commit_refused();')
  }
}

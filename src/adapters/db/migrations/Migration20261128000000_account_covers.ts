import { Migration } from '@mikro-orm/migrations'

/**
 * `account_covers(account, required)`: true when the account's credits less those reserved cover
 * `required`; otherwise it fails the statement it is in (SQLSTATE CR402, the credits available
 * in the error's detail). A chat turn's or a run's creation calls it in its own insert
 * (src/adapters/db/credits.repository.ts, `coversGuard`), so the balance is checked in the
 * statement that creates the turn, not in a read before it.
 */
export class Migration20261128000000_account_covers extends Migration {
  override name = 'Migration20261128000000_account_covers'
  override up(): void {
    this.addSql(`create or replace function account_covers(account_id uuid, required bigint) returns boolean language plpgsql volatile as $$
declare available bigint;
begin
  select credits - credits_reserved into available from account a where a.id = account_id;
  if available is null or available < required then
    raise exception 'insufficient credits: % needed, % available', required, coalesce(available, 0)
      using errcode = 'CR402', detail = coalesce(available, 0)::text;
  end if;
  return true;
end
$$;`)
  }

  override down(): void {
    this.addSql('drop function if exists account_covers(uuid, bigint);')
  }
}

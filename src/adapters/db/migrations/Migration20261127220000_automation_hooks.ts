import { Migration } from '@mikro-orm/migrations'

/**
 * Signal webhooks in (docs/api.md, "Signal webhooks"): one row per automation with a `webhook`
 * trigger, holding the SHA-256 of its URL token (the token itself is shown once, in the URL) and
 * its Standard Webhooks signing secret (needed in clear to check signatures, as an outbound
 * endpoint's is). A message sent twice is recognised by the actor inbox's dedupe key.
 */
export class Migration20261127220000_automation_hooks extends Migration {
  override name = 'Migration20261127220000_automation_hooks'
  override up(): void {
    this.addSql(`
create table automation_hook (
  automation_id uuid primary key,
  account_id uuid not null references account(id) on delete cascade,
  token_sha256 text not null,
  secret text not null,
  created_at timestamptz not null default now()
);
`)
  }

  override down(): void {
    this.addSql('drop table if exists automation_hook;')
  }
}

import { Migration } from '@mikro-orm/migrations'

/**
 * Signal hook rotation (docs/api.md, "Signal webhooks"): `POST /automations/:id/hook/rotate`
 * issues a new URL token and signing secret; the previous pair stays valid until
 * `prev_valid_until` (the rotation's grace period, 0 for none), each token checked with its own secret.
 */
export class Migration20261128031000_hook_rotation extends Migration {
  override name = 'Migration20261128031000_hook_rotation'
  override up(): void {
    this.addSql(`
alter table automation_hook add column prev_token_sha256 text, add column prev_secret text, add column prev_valid_until timestamptz;
`)
  }

  override down(): void {
    this.addSql('alter table automation_hook drop column if exists prev_token_sha256, drop column if exists prev_secret, drop column if exists prev_valid_until;')
  }
}

import { Migration } from '@mikro-orm/migrations'

/**
 * `effect.attempt_log`: the failed attempts of an effect that were retried, the last 20, each
 * `{ attempt, endedAt, error }`, appended by the statement that already records the failure
 * (deferEffect): no extra write, and none on an attempt that succeeds. The last attempt of an
 * effect that failed for good is its `last_error` and `updated_at`. Null until an attempt fails.
 */
export class Migration20261126180000_effect_attempt_log extends Migration {
  override name = 'Migration20261126180000_effect_attempt_log'
  override up(): void {
    this.addSql('alter table effect add column attempt_log jsonb;')
  }

  override down(): void {
    this.addSql('alter table effect drop column if exists attempt_log;')
  }
}

import { Migration } from '@mikro-orm/migrations'

/**
 * Added the actor runtime's `effect.attempt_log`. The runtime owns its schema now
 * (src/actors/runtime/schema/, run before these migrations), so this changes nothing: it stays listed
 * because databases record it by name.
 */
export class Migration20261126180000_effect_attempt_log extends Migration {
  override name = 'Migration20261126180000_effect_attempt_log'
  override up(): void {}
  override down(): void {}
}

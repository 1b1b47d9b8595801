import { Migration } from '@mikro-orm/migrations'

/**
 * Made the actor runtime's effect leases, parent and child actors and dead letters. The runtime
 * owns its schema now (src/actors/runtime/schema/, run before these migrations), so this changes
 * nothing: it stays listed because databases record it by name.
 */
export class Migration20261123120000_effect_lease extends Migration {
  override name = 'Migration20261123120000_effect_lease'
  override up(): void {}
}

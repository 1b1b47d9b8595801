import { Migration } from '@mikro-orm/migrations'

/**
 * Made the actor runtime's `actor_commit_refused()`. The runtime owns its schema now
 * (src/actors/runtime/schema/, run before these migrations), so this changes nothing: it stays listed
 * because databases record it by name.
 */
export class Migration20261127000000_commit_refused extends Migration {
  override name = 'Migration20261127000000_commit_refused'
  override up(): void {}
  override down(): void {}
}

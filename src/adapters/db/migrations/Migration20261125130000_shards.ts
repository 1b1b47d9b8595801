import { Migration } from '@mikro-orm/migrations'

/**
 * Made the actor runtime's shards, shard and role leases and node registry. The runtime owns its
 * schema now (src/actors/runtime/schema/, run before these migrations), so this changes nothing: it
 * stays listed because databases record it by name.
 */
export class Migration20261125130000_shards extends Migration {
  override name = 'Migration20261125130000_shards'
  override up(): void {}
}

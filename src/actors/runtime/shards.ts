/** Actors are spread over this many shards; a node polls the shards it holds a lease on. */
export const SHARD_COUNT = 64

/**
 * The shard of an actor id: FNV-1a (32 bit) over its UTF-8 bytes, low 6 bits. The database
 * computes the same (`actor_shard`, the generated column `actor.shard`).
 *
 * @example
 * shardOf('agent_1') // 0..63, the same as `select actor_shard('agent_1')`
 */
export function shardOf(id: string): number {
  let h = 0x811c9dc5
  for (const byte of new TextEncoder().encode(id)) h = Math.imul(h ^ byte, 0x01000193) >>> 0
  return h & (SHARD_COUNT - 1)
}

import { hostname } from 'node:os'
import type pg from 'pg'
import type { Logger } from '../logger.ts'
import { acquireShards, heartbeat, releaseShards, retireNode, type HeldShard } from '../db/shardLease.store.ts'
import { SHARD_COUNT } from './shards.ts'
import { releaseAllLeases } from './effectStore.ts'

export type ShardLeaseOptions = {
  pool: pg.Pool
  nodeId: string
  logger: Logger
  /** How long a lease and a heartbeat last without a renewal (renewed every third of it). */
  ttlMs: number
  /** A process alone on the database (it holds the boot lock): takes every shard and effect at start. */
  sole?: boolean
}

/**
 * This node's share of the shards. Every third of the TTL one heartbeat renews the leases it
 * holds and says how many nodes are alive; the node then takes unheld shards up to its fair
 * share (`ceil(64 / nodes)`), hands back what is over it (so a node that joins gets work at
 * once), and retires nodes whose heartbeat expired (their effects are released to the shards'
 * owners). Locally, a lease counts only until `ttl * 0.8` after the renewal that confirmed it
 * was sent: a node that cannot renew (paused, partitioned, the database down) stops polling its
 * shards before any other node can take them.
 *
 * @example
 * const leases = createShardLeases({ pool, nodeId, logger, ttlMs: 10_000 })
 * await leases.start()
 * leases.shards() // null: all of them; else the shards this node polls now
 */
export function createShardLeases({ pool, nodeId, logger, ttlMs, sole = false }: ShardLeaseOptions) {
  const node = { id: nodeId, pid: process.pid, host: hostname() }
  let held = new Map<number, number>()
  let validUntil = 0
  let timer: NodeJS.Timeout | undefined
  let running: Promise<void> | undefined
  let stopped = true

  const keep = (shards: HeldShard[]) => shards.forEach((s) => held.set(s.shard, s.epoch))

  async function renew(first = false): Promise<void> {
    const sentAt = performance.now()
    const beat = await heartbeat(pool, node, ttlMs)
    const before = held
    held = new Map()
    keep(beat.held)
    for (const dead of beat.dead) {
      const released = await retireNode(pool, dead)
      logger.warn({ node: dead, effects: released }, 'a node stopped renewing; its effects are released to the shard owners')
    }
    if (first && sole) {
      const effects = await releaseAllLeases(pool)
      if (effects > 0) logger.info({ effects }, 'released effect leases left by an earlier process')
      keep(await acquireShards(pool, nodeId, ttlMs, { count: SHARD_COUNT, all: true }))
    }
    const share = sole ? SHARD_COUNT : Math.ceil(SHARD_COUNT / (beat.others + 1))
    if (held.size < share) keep(await acquireShards(pool, nodeId, ttlMs, { count: share - held.size }))
    else if (held.size > share) {
      const extra = [...held.keys()].sort((a, b) => b - a).slice(0, held.size - share)
      extra.forEach((s) => held.delete(s))
      await releaseShards(pool, nodeId, extra)
    }
    validUntil = sentAt + ttlMs * 0.8
    const lost = [...before.keys()].filter((s) => !held.has(s))
    if (lost.length > 0 && !first) logger.warn({ shards: lost }, 'shard leases lost (not renewed in time)')
  }

  function schedule() {
    if (stopped) return
    timer = setTimeout(() => {
      running = renew()
        .catch((err: unknown) => logger.error({ err }, 'shard lease renewal failed'))
        .finally(schedule)
    }, Math.max(20, Math.floor(ttlMs / 3)))
    timer.unref()
  }

  const valid = () => !stopped && performance.now() < validUntil

  return {
    nodeId,
    /** Registers the node and takes its share, then renews in the background. */
    async start(): Promise<void> {
      stopped = false
      await renew(true)
      schedule()
    },
    /**
     * Stops renewing and hands every shard back, so other nodes poll them at once. The effects
     * this node runs stay its own (their leases hold) until `retire`.
     */
    async handBack(): Promise<void> {
      stopped = true
      if (timer) clearTimeout(timer)
      await running
      held = new Map()
      await releaseShards(pool, nodeId, null, { leaving: true })
    },
    /** The node is gone: the effects it still holds are released to the owners of their shards. */
    retire: () => retireNode(pool, nodeId),
    /** The shards to poll now: null for all of them, [] while no lease is known to be valid. */
    shards(): number[] | null {
      if (!valid()) return []
      return held.size === SHARD_COUNT ? null : [...held.keys()]
    },
    /** The leases held now, with their epochs (for operators). */
    held: (): HeldShard[] => (valid() ? [...held].map(([shard, epoch]) => ({ shard, epoch })) : []),
  }
}

export type ShardLeases = ReturnType<typeof createShardLeases>

import { hostname } from 'node:os'
import type pg from 'pg'
import type { Logger } from './runtimeLogger.ts'
import type { NodeBus } from './nodeBus.ts'
import { acquireRole, acquireShards, heartbeat, releaseShards, retireNode, type HeldShard } from './shardLease.store.ts'
import { SHARD_COUNT } from './shards.ts'

export type ShardLeaseOptions = {
  pool: pg.Pool
  nodeId: string
  logger: Logger
  /** How long a lease and a heartbeat last without a renewal (renewed every third of it). */
  ttlMs: number
  /**
   * Jobs only one node may do at a time (the chain indexer): this node takes each when nobody
   * holds it, and is told when it gains or loses it.
   */
  roles?: Record<string, RoleHooks>
  /**
   * Nudges between nodes: a node that joins, hands shards back or retires a dead node says so,
   * and the others renew at once instead of at their next renewal.
   */
  bus?: NodeBus
}

/** The bus channel of shard nudges (the payload: the node that changed the shares). */
const SHARDS_CHANGED = 'shards_changed'

/**
 * This node's share of the shards. Every third of the TTL one heartbeat renews the leases it
 * holds and says how many nodes are alive; the node then takes unheld shards up to its fair
 * share (`ceil(64 / nodes)`), hands back what is over it, and retires nodes whose heartbeat
 * expired (their effects are released to the shards' owners). With a bus, a node that joins,
 * hands shards back or retires a node nudges the others, which renew at once: a joining node
 * has its share within one renewal, and freed shards are taken at once. Locally, a lease counts only until `ttl * 0.8` after the renewal that confirmed it
 * was sent: a node that cannot renew (paused, partitioned, the database down) stops polling its
 * shards before any other node can take them.
 *
 * @example
 * const leases = createShardLeases({ pool, nodeId, logger, ttlMs: 10_000 })
 * await leases.start()
 * leases.shards() // null: all of them; else the shards this node polls now
 */
export function createShardLeases({ pool, nodeId, logger, ttlMs, roles = {}, bus }: ShardLeaseOptions) {
  const node = { id: nodeId, pid: process.pid, host: hostname(), processStarted: performance.timeOrigin }
  let held = new Map<number, number>()
  let heldRoles = new Set<string>()
  /** Other live nodes at the last heartbeat. */
  let others = 0
  let validUntil = 0
  let stopped = true
  const loop = renewalLoop({ renew: () => renew(), everyMs: Math.max(20, Math.floor(ttlMs / 3)), logger, isStopped: () => stopped })
  bus?.subscribe(SHARDS_CHANGED, (from) => {
    if (from !== nodeId) loop.now()
  })
  const nudge = () => bus?.publish(SHARDS_CHANGED, nodeId)

  const keep = (shards: HeldShard[]) => shards.forEach((s) => held.set(s.shard, s.epoch))

  async function renew(first = false): Promise<void> {
    const sentAt = performance.now()
    const beat = await heartbeat(pool, node, ttlMs)
    const before = held
    held = new Map()
    keep(beat.held)
    // A node whose process is gone from this host (a crash and a restart) need not wait out its leases.
    const gone = beat.sameHost.filter((n) => !processAlive(n)).map((n) => n.id)
    for (const dead of [...beat.dead, ...gone]) {
      const released = await retireNode(pool, dead)
      logger.warn({ node: dead, effects: released }, 'a node is gone (its heartbeat ran out or its process died); its shards and effects are released')
    }
    if (gone.length > 0) beat.others -= gone.length
    let changed = beat.dead.length + gone.length > 0
    others = beat.others
    const share = Math.ceil(SHARD_COUNT / (beat.others + 1))
    let handedBack: number[] = []
    if (held.size < share) keep(await acquireShards(pool, nodeId, ttlMs, { count: share - held.size }))
    else if (held.size > share) {
      handedBack = [...held.keys()].sort((a, b) => b - a).slice(0, held.size - share)
      handedBack.forEach((s) => held.delete(s))
      await releaseShards(pool, nodeId, handedBack)
      changed = true
    }
    validUntil = sentAt + ttlMs * 0.8
    await settleRoles(beat.roles)
    const lost = [...before.keys()].filter((s) => !held.has(s) && !handedBack.includes(s))
    if (lost.length > 0 && !first) logger.warn({ shards: lost }, 'shard leases lost (not renewed in time)')
    // A node that joins, or shards freed: the others take their share now.
    if (first || changed) nudge()
  }

  /** Takes the roles nobody holds and tells each role's hooks what changed. */
  async function settleRoles(renewed: string[]) {
    const now = new Set(renewed)
    for (const role of Object.keys(roles)) if (!now.has(role) && !stopped && (await acquireRole(pool, nodeId, ttlMs, role))) now.add(role)
    const before = heldRoles
    heldRoles = now
    for (const role of Object.keys(roles)) {
      if (now.has(role) && !before.has(role)) await hook(role, 'gained')
      if (!now.has(role) && before.has(role)) await hook(role, 'lost')
    }
  }
  async function hook(role: string, change: 'gained' | 'lost') {
    logger.info({ role, node: nodeId }, change === 'gained' ? 'took a role' : 'lost a role')
    await Promise.resolve(roles[role]![change]()).catch((err: unknown) => logger.error({ err, role }, `role ${change} hook failed`))
  }

  const valid = () => !stopped && performance.now() < validUntil

  return {
    nodeId,
    /** Registers the node and takes its share, then renews in the background. */
    async start(): Promise<void> {
      stopped = false
      await loop.start(() => renew(true))
    },
    /**
     * Stops renewing and hands every shard back, so other nodes poll them at once. The effects
     * this node runs stay its own (their leases hold) until `retire`.
     */
    async handBack(): Promise<void> {
      stopped = true
      await loop.stop()
      held = new Map()
      await settleRoles([])
      await releaseShards(pool, nodeId, null, { leaving: true })
      nudge()
    },
    /** The node is gone: the effects it still holds are released to the owners of their shards. */
    retire: () => retireNode(pool, nodeId),
    /** The shards to poll now: null for all of them, [] while no lease is known to be valid. */
    shards(): number[] | null {
      if (!valid()) return []
      return held.size === SHARD_COUNT ? null : [...held.keys()]
    },
    /** Whether this node was the only live one at its last heartbeat (then its cache of actors is the truth). */
    alone: () => others === 0 && held.size === SHARD_COUNT,
    /** The leases held now, with their epochs (for operators). */
    held: (): HeldShard[] => (valid() ? [...held].map(([shard, epoch]) => ({ shard, epoch })) : []),
  }
}

export type ShardLeases = ReturnType<typeof createShardLeases>

/**
 * Runs `renew` every `everyMs`, one at a time; `now()` runs it at once (or right after the one
 * running), then the schedule goes on from there.
 */
function renewalLoop({ renew, everyMs, logger, isStopped }: { renew(): Promise<void>; everyMs: number; logger: Logger; isStopped(): boolean }) {
  let timer: NodeJS.Timeout | undefined
  let running: Promise<void> | undefined
  /** `now()` was called while a renewal ran: renew again right after it. */
  let again = false
  const settle = () => {
    running = undefined
    if (again && !isStopped()) {
      again = false
      now()
    } else schedule()
  }
  function now(): void {
    if (isStopped()) return
    if (running) {
      again = true
      return
    }
    clearTimeout(timer)
    running = renew().catch((err: unknown) => logger.error({ err }, 'shard lease renewal failed')).finally(settle)
  }
  function schedule() {
    if (isStopped()) return
    clearTimeout(timer)
    timer = setTimeout(now, everyMs)
    timer.unref()
  }
  return {
    now,
    /** Runs the first renewal (its failure is thrown), then the schedule. */
    async start(first: () => Promise<void>): Promise<void> {
      const run = first()
      running = run.catch(() => {})
      try {
        await run
      } catch (err) {
        running = undefined
        throw err
      }
      settle()
    },
    async stop(): Promise<void> {
      clearTimeout(timer)
      await running
    },
  }
}

/**
 * Whether a node's process on this host is alive: this very process (another runtime in it), or
 * a live pid. This process's pid with another start time was a predecessor's (a restart in a
 * container reuses the pid).
 */
function processAlive({ pid, started }: { pid: number; started: number }): boolean {
  if (pid === process.pid) return Math.abs(started - performance.timeOrigin) < 1
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/** What a node does when it takes or loses a one-node job. */
export type RoleHooks = { gained(): Promise<void> | void; lost(): Promise<void> | void }

import type { Queryable } from './actorStore.ts'

/** A lease a node holds: the shard and the epoch it was handed over at. */
export type HeldShard = { shard: number; epoch: number }

/** A node: its id, and the process it runs in (`processStarted`: the process's start, in ms since the epoch). */
export type NodeIdentity = { id: string; pid: number; host: string; processStarted: number }

const OPEN_EFFECT = `e.status in ('pending', 'prepared', 'sent')`

/**
 * The node's heartbeat, in one statement: its `service_node` row lives on for `ttlMs`, the
 * leases it still holds (unexpired) are renewed, and the answer says which it holds, how many
 * other nodes are alive, and which nodes died without a clean stop (their rows expired).
 */
export async function heartbeat(
  db: Queryable, node: NodeIdentity, ttlMs: number,
): Promise<{ held: HeldShard[]; roles: string[]; others: number; dead: string[]; sameHost: Array<{ id: string; pid: number; started: number }> }> {
  type Row = { held: Array<[number, string]>; roles: string[]; others: string; dead: string[]; same_host: Array<{ id: string; pid: number; started: number }> }
  const { rows } = await db.query<Row>({
    name: 'shard.heartbeat',
    text: `with n as (
             insert into service_node (id, pid, host, process_started, expires_at) values ($1, $2, $3, $5, now() + $4 * interval '1 millisecond')
             on conflict (id) do update set heartbeat_at = now(), expires_at = excluded.expires_at, stopped_at = null, leaving = false
             returning id
           ), r as (
             update shard_lease set expires_at = now() + $4 * interval '1 millisecond'
              where owner = $1 and expires_at > now()
             returning shard, epoch
           ), ro as (
             update role_lease set expires_at = now() + $4 * interval '1 millisecond'
              where owner = $1 and expires_at > now()
             returning role
           )
           select coalesce((select jsonb_agg(jsonb_build_array(shard, epoch::text)) from r), '[]'::jsonb) as held,
                  array(select role from ro) as roles,
                  (select count(*) from service_node where id <> $1 and stopped_at is null and not leaving and expires_at > now()) as others,
                  array(select id from service_node where id <> $1 and stopped_at is null and expires_at <= now()) as dead,
                  coalesce((select jsonb_agg(jsonb_build_object('id', id, 'pid', pid, 'started', process_started)) from service_node
                             where id <> $1 and host = $3 and stopped_at is null and expires_at > now()), '[]'::jsonb) as same_host`,
    values: [node.id, node.pid, node.host, ttlMs, node.processStarted],
  })
  const r = rows[0]!
  return {
    held: r.held.map(([shard, epoch]) => ({ shard, epoch: Number(epoch) })), roles: r.roles, others: Number(r.others), dead: r.dead, sameHost: r.same_host,
  }
}

/** Takes up to `count` shards nobody holds (never leased, handed back, or expired), each at a new epoch. */
export async function acquireShards(db: Queryable, nodeId: string, ttlMs: number, { count }: { count: number }): Promise<HeldShard[]> {
  const { rows } = await db.query<{ shard: number; epoch: string }>(
    `with free as (
       select shard from shard_lease
        where owner is null or expires_at <= now()
        order by shard limit $3 for update skip locked
     )
     update shard_lease l set owner = $1, epoch = l.epoch + 1, expires_at = now() + $2 * interval '1 millisecond'
       from free where l.shard = free.shard
     returning l.shard, l.epoch`,
    [nodeId, ttlMs, count],
  )
  return rows.map((r) => ({ shard: r.shard, epoch: Number(r.epoch) }))
}

/** Takes a role nobody holds (or whose holder's lease expired); false when another node has it. */
export async function acquireRole(db: Queryable, nodeId: string, ttlMs: number, role: string): Promise<boolean> {
  const { rowCount } = await db.query(
    `insert into role_lease as l (role, owner, epoch, expires_at) values ($3, $1, 1, now() + $2 * interval '1 millisecond')
     on conflict (role) do update set owner = $1, epoch = l.epoch + 1, expires_at = excluded.expires_at
      where l.owner is null or l.expires_at <= now()`,
    [nodeId, ttlMs, role],
  )
  return (rowCount ?? 0) > 0
}

/**
 * Hands shards back (a share for a node that joined, or all of them on a clean stop): another
 * node can take them at once (and, leaving, its roles). A `leaving` node no longer counts in the others' shares; it is
 * retired when it says so or when its heartbeat runs out.
 */
export async function releaseShards(db: Queryable, nodeId: string, shards: number[] | null, { leaving = false } = {}): Promise<void> {
  await db.query(
    `with n as (update service_node set leaving = true where id = $1 and $3),
     r as (update role_lease set owner = null, expires_at = '-infinity' where owner = $1 and $3)
     update shard_lease set owner = null, expires_at = '-infinity' where owner = $1 and ($2::smallint[] is null or shard = any($2))`,
    [nodeId, shards, leaving],
  )
}

/**
 * A node is gone (a clean stop, its heartbeat expired, or its process is gone from this host):
 * its row is marked stopped, its shard and role leases are freed and the effects it held are
 * released, so other nodes take them now instead of when the leases end (their lease ends now;
 * `claimed_by` keeps the node that held them, so the next claim knows it is not their first run).
 */
export async function retireNode(db: Queryable, nodeId: string): Promise<number> {
  const { rows } = await db.query<{ released: string }>(
    `with n as (
       update service_node set stopped_at = coalesce(stopped_at, now()), expires_at = least(expires_at, now()) where id = $1
     ), s as (
       update shard_lease set owner = null, expires_at = '-infinity' where owner = $1
     ), r as (
       update role_lease set owner = null, expires_at = '-infinity' where owner = $1
     ), e as (
       update effect e set lease_until = null where e.claimed_by = $1 and e.lease_until is not null and ${OPEN_EFFECT}
       returning 1
     )
     select count(*) as released from e`,
    [nodeId],
  )
  return Number(rows[0]?.released ?? 0)
}

/** A node as operators see it; times are ISO 8601. */
export type NodeRow = {
  id: string
  pid: number
  host: string
  /** `active`; `leaving` (stopping: its shards handed back); `stopped` (cleanly, or retired by another node); `expired` (no heartbeat, not yet retired). */
  status: 'active' | 'leaving' | 'stopped' | 'expired'
  startedAt: string
  heartbeatAt: string
  expiresAt: string
  stoppedAt: string | null
  shards: number[]
  /** The one-node jobs it holds (`indexer`). */
  roles: string[]
}

const iso = (t: Date | string) => new Date(t).toISOString()

/** Nodes seen in the last hour (the live ones first) with the shards each holds now. */
export async function listNodes(db: Queryable): Promise<NodeRow[]> {
  type Row = { id: string; pid: number; host: string; status: NodeRow['status']; started_at: Date; heartbeat_at: Date; expires_at: Date; stopped_at: Date | null; shards: number[]; roles: string[] }
  const { rows } = await db.query<Row>(
    `select n.id, n.pid, n.host, n.started_at,
            case when n.stopped_at is not null then 'stopped' when n.expires_at <= now() then 'expired'
                 when n.leaving then 'leaving' else 'active' end as status, n.heartbeat_at, n.expires_at, n.stopped_at,
            array(select shard from shard_lease l where l.owner = n.id and l.expires_at > now() order by shard)::int[] as shards,
            array(select role from role_lease l where l.owner = n.id and l.expires_at > now() order by role) as roles
       from service_node n
      where n.heartbeat_at > now() - interval '1 hour' or (n.stopped_at is null and n.expires_at > now())
      order by (n.stopped_at is null and n.expires_at > now()) desc, n.started_at`,
  )
  return rows.map((r) => ({
    id: r.id, pid: r.pid, host: r.host, status: r.status, startedAt: iso(r.started_at), heartbeatAt: iso(r.heartbeat_at),
    expiresAt: iso(r.expires_at), stoppedAt: r.stopped_at && iso(r.stopped_at), shards: r.shards, roles: r.roles,
  }))
}

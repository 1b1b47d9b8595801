import { randomUUID } from 'node:crypto'
import type pg from 'pg'
import { nodeGoneSql, nodeLiveSql } from '../../actors/runtime/index.ts'

type Db = Pick<pg.Pool, 'query'>

/**
 * The idempotency keys (`idempotency_key`): one row per (account, route, key), with the
 * fingerprint of the first request and, once it completed, its stored response. Used by the
 * HTTP `Idempotency-Key` middleware and by MCP's `idempotencyKey` (under the route `mcp`).
 */

/**
 * A key's stored state, with the seconds until an in-flight claim lapses (at least 1) and whether
 * its holder is a node known to be live (false for a claim made before claims named a node).
 */
export type IdempotencyKeyRow = {
  fingerprint: string
  status: string
  response_status: number
  response_body: unknown
  retry_after: number | null
  holder_live: boolean
  /** Its holder's node was retired or its heartbeat ran out: a retry takes the key over now. */
  holder_gone: boolean
}

/** Who holds an in-flight key: the node (`service_node.id`) and the claim (one per request). */
export type KeyHolder = { node: string; claim: string }

/**
 * Whether the holder of an in-flight key is gone: its node was retired (a clean stop, its
 * process seen gone from its host) or its heartbeat ran out. A holder with no node row (a claim
 * made before claims named a node, or a runtime that never registered) is not gone. What makes a
 * node gone or live is the runtime's (its node registry): these are its SQL fragments.
 */
const HOLDER_GONE = nodeGoneSql('idempotency_key.holder_node')
const HOLDER_LIVE = nodeLiveSql('idempotency_key.holder_node')

/**
 * Claims a key as in flight for `leaseSeconds` in the name of `holder`, or takes over an
 * in-flight claim of the same fingerprint whose lease lapsed or whose node is gone. False when
 * the key is held (completed, in flight on a live node, or another body).
 */
export async function claimIdempotencyKey(
  db: Db,
  { accountId, route, key, fingerprint, leaseSeconds, holder }:
    { accountId: string; route: string; key: string; fingerprint: string; leaseSeconds: number; holder: KeyHolder },
): Promise<boolean> {
  const claim = await db.query(
    `insert into idempotency_key (account_id, route, key, fingerprint, status, locked_until, holder_node, holder_claim)
     values ($1, $2, $3, $4, 'in_flight', now() + $5 * interval '1 second', $6, $7)
     on conflict (account_id, route, key) do update
       set locked_until = excluded.locked_until, holder_node = excluded.holder_node, holder_claim = excluded.holder_claim
       where idempotency_key.status = 'in_flight' and idempotency_key.fingerprint = excluded.fingerprint
         and (idempotency_key.locked_until < now() or ${HOLDER_GONE})
     returning key`,
    [accountId, route, key, fingerprint, leaseSeconds, holder.node, holder.claim],
  )
  return claim.rowCount !== 0
}

/** A key's stored state (undefined when there is none). */
export async function findIdempotencyKey(db: Db, accountId: string, route: string, key: string): Promise<IdempotencyKeyRow | undefined> {
  const { rows } = await db.query<IdempotencyKeyRow>(
    `select fingerprint, status, response_status, response_body,
            greatest(1, ceil(extract(epoch from (locked_until - now()))))::int as retry_after,
            ${HOLDER_LIVE} as holder_live,
            ${HOLDER_GONE} as holder_gone
       from idempotency_key where account_id = $1 and route = $2 and key = $3`,
    [accountId, route, key],
  )
  return rows[0]
}

/** Stores a key's response (the request completed with a 2xx), if `claim` still holds it. */
export async function completeIdempotencyKey(
  db: Db,
  { accountId, route, key, status, body, claim }: { accountId: string; route: string; key: string; status: number; body: unknown; claim: string },
): Promise<void> {
  await db.query(
    `update idempotency_key set status = 'completed', response_status = $4, response_body = $5::jsonb
      where account_id = $1 and route = $2 and key = $3 and status = 'in_flight' and holder_claim = $6`,
    [accountId, route, key, status, JSON.stringify(body), claim],
  )
}

/** Drops a key still in flight under `claim` (the request failed: the key can be retried). */
export async function releaseIdempotencyKey(db: Db, accountId: string, route: string, key: string, claim: string): Promise<void> {
  await db.query(
    `delete from idempotency_key where account_id = $1 and route = $2 and key = $3 and status = 'in_flight' and holder_claim = $4`,
    [accountId, route, key, claim],
  )
}

/** Drops keys older than 48 hours; the number dropped. */
export async function deleteOldIdempotencyKeys(db: Db): Promise<number> {
  const { rowCount } = await db.query(`delete from idempotency_key where created_at < now() - interval '48 hours'`)
  return rowCount ?? 0
}

/**
 * Claims an MCP call's key as completed with `fingerprint`, unless it exists: the fingerprint of
 * the key's first call (undefined only when a concurrent claim is not in this statement's snapshot).
 */
export async function claimMcpKey(db: Db, accountId: string, key: string, fingerprint: string): Promise<string | undefined> {
  const { rows } = await db.query<{ fingerprint: string }>(
    `with claimed as (
       insert into idempotency_key (account_id, route, key, fingerprint, status, locked_until)
       values ($1, 'mcp', $2, $3, 'completed', now())
       on conflict (account_id, route, key) do nothing
       returning fingerprint)
     select fingerprint from claimed
     union all
     select fingerprint from idempotency_key where account_id = $1 and route = 'mcp' and key = $2`,
    [accountId, key, fingerprint],
  )
  return rows[0]?.fingerprint
}

/** The fingerprint of an MCP call's key (undefined when there is none). */
export async function mcpKeyFingerprint(db: Db, accountId: string, key: string): Promise<string | undefined> {
  const { rows } = await db.query<{ fingerprint: string }>(`select fingerprint from idempotency_key where account_id = $1 and route = 'mcp' and key = $2`, [
    accountId,
    key,
  ])
  return rows[0]?.fingerprint
}

/**
 * The store bound to the pool and this node (whose id names the claims it makes): the port the
 * `Idempotency-Key` middleware and MCP's key claim reach through `core.idempotencyKeys`, and the
 * hourly sweep.
 *
 * @example
 * const keys = createIdempotencyKeys(pool, { nodeId: () => runtime.node().id })
 * const claim = await keys.claim({ accountId, route: 'swap/execute', key, fingerprint, leaseSeconds: 60 })
 * if (!claim) await keys.find(accountId, 'swap/execute', key)
 */
export function createIdempotencyKeys(db: Db, { nodeId }: { nodeId: () => string }) {
  return {
    /** Claims a key for one request of this node; the claim's id, or undefined when the key is held. */
    claim: async (input: Omit<Parameters<typeof claimIdempotencyKey>[1], 'holder'>): Promise<string | undefined> => {
      const claim = randomUUID()
      return (await claimIdempotencyKey(db, { ...input, holder: { node: nodeId(), claim } })) ? claim : undefined
    },
    find: (accountId: string, route: string, key: string) => findIdempotencyKey(db, accountId, route, key),
    complete: (input: Parameters<typeof completeIdempotencyKey>[1]) => completeIdempotencyKey(db, input),
    release: (accountId: string, route: string, key: string, claim: string) => releaseIdempotencyKey(db, accountId, route, key, claim),
    /** Drops keys older than 48 hours (they are promised for at least 24); the number dropped. */
    sweep: () => deleteOldIdempotencyKeys(db),
    claimMcp: (accountId: string, key: string, fingerprint: string) => claimMcpKey(db, accountId, key, fingerprint),
    mcpFingerprint: (accountId: string, key: string) => mcpKeyFingerprint(db, accountId, key),
  }
}
export type IdempotencyKeys = ReturnType<typeof createIdempotencyKeys>

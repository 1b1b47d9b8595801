import type pg from 'pg'
import { contextField, contextKey } from './inspect.store.ts'
import { FOLD_AFTER_DELTAS, foldActorCounts } from './inspectCounts.store.ts'

/**
 * The runtime's read model (`runtime.read`): actors of a kind read as the app's records, each
 * its id, account, state, machine context and times. Generic: a filter names a context key or
 * path and a value, never what it means to the app. A filter's SQL keeps the form the
 * expression and partial indexes on `actor` are written in (a context key inlined, a state list
 * or kind list as literals), so they apply.
 */

type Db = Pick<pg.Pool, 'query'>
const iso = (v: string | Date) => new Date(v).toISOString()

/** An actor as a read model: its state, its machine context, when it was created and last changed (ISO 8601). */
export type ActorRecord<C = Record<string, unknown>> = { id: string; accountId: string; status: string; context: C; createdAt: string; updatedAt: string }
/** A context field equal to a value: `{ key: 'agentId', value: agentId }`. */
export type ContextEquals = { key: string; value: string }

type Row<C> = { account_id: string; status: string; ctx: C; created_at: Date | string; updated_at: Date | string }
const recordOf = <C>(id: string, r: Row<C>): ActorRecord<C> => ({ id, accountId: r.account_id, status: r.status, context: r.ctx, createdAt: iso(r.created_at), updatedAt: iso(r.updated_at) })

/** A literal of SQL for a kind or state name (letters, digits, `.`, `_`, `-` only), so a partial index on it applies. */
export function literal(v: string): string {
  if (!/^[A-Za-z0-9._-]+$/.test(v)) throw new Error(`Not a kind or state name: ${v}`)
  return `'${v}'`
}
/** A list of such literals in parentheses, for `in`/`not in` (never empty). */
export const literals = (vs: readonly string[]) => {
  if (vs.length === 0) throw new Error('An empty list of names')
  return `(${vs.map(literal).join(', ')})`
}

/** A context path as a brace literal (`{context,approval,status}`): keys only. */
export function contextPath(path: readonly string[]): string {
  return `'{context,${path.map(contextKey).join(',')}}'`
}

const SELECT = `select status, snapshot->'context' as ctx, created_at, updated_at, account_id from actor`

/**
 * An actor of `kind` by id (undefined when there is none of that kind).
 *
 * @example
 * const run = await actorOfKind(pool, 'run', runId)
 */
export async function actorOfKind<C>(db: Db, kind: string, id: string): Promise<ActorRecord<C> | undefined> {
  const { rows } = await db.query<Row<C>>(`${SELECT} where id = $1 and kind = $2`, [id, kind])
  return rows[0] && recordOf(id, rows[0])
}

/** Actors of `kind` by id, in one statement (those of another kind, or none, are left out; in no particular order). */
export async function actorsOfKind<C>(db: Db, kind: string, ids: readonly string[]): Promise<Array<ActorRecord<C>>> {
  if (ids.length === 0) return []
  const { rows } = await db.query<Row<C> & { id: string }>(`select id, ${SELECT.slice('select '.length)} where id = any($1::text[]) and kind = $2`, [ids, kind])
  return rows.map((r) => recordOf(r.id, r))
}

export type NamingPage = {
  kind: string
  /** The context field the actors name (the index on it, created_at desc, id desc applies). */
  named: ContextEquals
  accountId: string
  status?: string | undefined
  /** Strictly older than this (created_at, id). */
  before?: { at: string | Date; id: string } | undefined
  limit: number
}

/**
 * A page of one account's actors of `kind` whose context names a value, newest first
 * (created_at desc, id desc), optionally of one state and before a (created_at, id) cursor.
 *
 * @example
 * const page = await pageNaming(pool, { kind: 'run', named: { key: 'agentId', value: agentId }, accountId, limit: 21 })
 */
export async function pageNaming<C>(db: Db, { kind, named, accountId, status, before, limit }: NamingPage): Promise<Array<ActorRecord<C>>> {
  const { rows } = await db.query<Row<C> & { id: string }>(
    `select id, ${SELECT.slice('select '.length)} where kind = $1 and ${contextField(named.key)} = $2 and account_id = $7 and ($3::text is null or status = $3)
       and ($4::timestamptz is null or (created_at, id) < ($4::timestamptz, $5::text))
     order by created_at desc, id desc limit $6`,
    [kind, named.value, status ?? null, before?.at ?? null, before?.id ?? null, limit, accountId],
  )
  return rows.map((r) => recordOf(r.id, r))
}

/** Which actors a read may answer besides its filters. */
export type CreatedBefore = {
  /**
   * Only an actor whose row was created before this effect's was: both `created_at`, the
   * database's clock (each the start of the transaction that wrote it), compared in the read's
   * own statement. So an actor created once the commit that planned the effect is done is never
   * taken for one that was there when it was planned. An effect not found filters nothing.
   */
  createdBeforeEffect?: string | undefined
}

/**
 * One actor of `kind` in one of `statuses` whose context names a value (undefined when there is
 * none): e.g. the one run not ended of an agent (a unique partial index on those states).
 * `createdBeforeEffect`: see CreatedBefore (the effect's row read by its primary key).
 */
export async function firstInStates(
  db: Db, kind: string, statuses: readonly string[], named: ContextEquals, { createdBeforeEffect }: CreatedBefore = {},
): Promise<{ id: string; accountId: string } | undefined> {
  const before = createdBeforeEffect === undefined ? '' : ' and not exists (select 1 from effect e where e.id = $3 and e.created_at <= actor.created_at)'
  const { rows } = await db.query<{ id: string; account_id: string }>(
    `select id, account_id from actor where kind = $1 and status in ${literals(statuses)} and ${contextField(named.key)} = $2${before} limit 1`,
    createdBeforeEffect === undefined ? [kind, named.value] : [kind, named.value, createdBeforeEffect],
  )
  return rows[0] && { id: rows[0].id, accountId: rows[0].account_id }
}

export type CarryingQuery = {
  accountId: string
  /** The kinds that may carry it (literals: a partial index on them applies). */
  kinds: readonly string[]
  /** The context path of the object they carry (`['approval']`): only actors whose context has an object there. */
  carrying: readonly string[]
  /** Context paths whose text must equal a value; an undefined value filters nothing. */
  equal?: ReadonlyArray<{ path: readonly string[]; value: string | undefined }>
  /** The context path the page is ordered by, descending, then by id ascending. */
  orderBy: readonly string[]
  /** The `[value at orderBy, id]` a page ended on. */
  after?: readonly [string, string] | undefined
  limit: number
}

/**
 * One account's actors of some kinds whose context carries an object at a path, ordered by a
 * context path's text descending, then by id (keyset paging), filtered by context values. Each
 * with its kind and account.
 *
 * @example
 * await actorsCarrying(pool, { accountId, kinds: ['walletop'], carrying: ['approval'], orderBy: ['approval', 'requestedAt'], limit: 50 })
 */
export async function actorsCarrying(db: Db, q: CarryingQuery): Promise<Array<ActorRecord & { kind: string; accountId: string }>> {
  const params: unknown[] = [q.accountId]
  const push = (v: unknown) => params.push(v)
  const equal = (q.equal ?? []).map(({ path, value }) => {
    const p = push(value ?? null)
    return `\n        and ($${p}::text is null or snapshot #>> ${contextPath(path)} = $${p})`
  })
  const order = `(snapshot #>> ${contextPath(q.orderBy)})`
  const limit = push(q.limit)
  const at = push(q.after?.[0] ?? null)
  const id = push(q.after?.[1] ?? null)
  const { rows } = await db.query<{ id: string; kind: string; account_id: string; status: string; context: Record<string, unknown>; created_at: Date | string; updated_at: Date | string }>(
    `select id, kind, account_id, status, snapshot->'context' as context, created_at, updated_at from actor
      where account_id = $1 and kind in ${literals(q.kinds)} and jsonb_typeof(snapshot #> ${contextPath(q.carrying)}) = 'object'${equal.join('')}
        and ($${at}::text is null or ${order} < $${at}
             or (${order} = $${at} and id > $${id}))
      order by ${order} desc, id limit $${limit}`,
    params,
  )
  return rows.map((r) => ({ id: r.id, kind: r.kind, accountId: r.account_id, status: r.status, context: r.context, createdAt: iso(r.created_at), updatedAt: iso(r.updated_at) }))
}

/**
 * The state of each actor of `kind` among `ids`, in one statement (an id with no actor of that
 * kind is absent from the map).
 *
 * @example
 * const states = await statesOf(pool, 'agent', agentIds) // Map { 'a1' => 'running', 'a2' => 'deleted' }
 */
export async function statesOf(db: Db, kind: string, ids: readonly string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map()
  const { rows } = await db.query<{ id: string; status: string }>(`select id, status from actor where id = any($1::text[]) and kind = $2`, [ids, kind])
  return new Map(rows.map((r) => [r.id, r.status]))
}

/**
 * The number of actors of `kind` in each state, exact, from the totals the triggers on `actor`
 * keep and their pending deltas (never a scan of the table); states with none are absent.
 *
 * @example
 * const counts = await countsOf(pool, 'agent') // Map { 'running' => 12, 'stopped' => 3 }
 */
export async function countsOf(db: Db, kind: string): Promise<Map<string, number>> {
  const { rows } = await db.query<{ status: string; count: number; deltas: number }>(
    `select status, sum(n)::int as count, sum(d)::int as deltas
       from (select status, n, 0 as d from actor_count where kind = $1 union all select status, n, 1 from actor_count_delta where kind = $1) t
      group by status`,
    [kind],
  )
  // The deltas are folded into the totals once they pile up, as the operator's counts do (one folder at a time).
  if (rows.reduce((sum, r) => sum + r.deltas, 0) > FOLD_AFTER_DELTAS) void foldActorCounts(db).catch(() => {})
  return new Map(rows.filter((r) => r.count !== 0).map((r) => [r.status, r.count]))
}

export type InStatesQuery = {
  /** Each kind asked for with the states it is read in: `{ walletop: ['confirmed'], launch: ['live'] }`. */
  states: Readonly<Record<string, readonly string[]>>
  /** Only actors whose context field is one of these values (the index on that field applies). */
  named?: { key: string; values: readonly string[] } | undefined
}

/** An actor with its kind and its creation to the microsecond (`createdMicros`, since the epoch: an exact order). */
export type KindRecord<C> = ActorRecord<C> & { kind: string; createdMicros: bigint }

/**
 * Actors of some kinds, each in the states asked for its kind, optionally whose context names
 * one of some values, oldest first (created_at, id), with their contexts. Without `named` it
 * reads every such actor (the index on kind and state).
 *
 * @example
 * const done = await actorsInStates(pool, { states: { walletop: ['confirmed'] }, named: { key: 'agentId', values: [agentId] } })
 */
export async function actorsInStates<C>(db: Db, { states, named }: InStatesQuery): Promise<Array<KindRecord<C>>> {
  const kinds = Object.entries(states).filter(([, s]) => s.length > 0)
  if (kinds.length === 0 || (named && named.values.length === 0)) return []
  const params: unknown[] = []
  const where = [`(${kinds.map(([kind, s]) => `(kind = ${literal(kind)} and status in ${literals(s)})`).join(' or ')})`]
  if (named) where.push(`${contextField(named.key)} = any($${params.push(named.values)}::text[])`)
  const { rows } = await db.query<Row<C> & { id: string; kind: string; created_us: string }>(
    `select id, kind, status, snapshot->'context' as ctx, created_at, updated_at, (extract(epoch from created_at) * 1000000)::bigint::text as created_us
       from actor where ${where.join(' and ')} order by created_at, id`,
    params,
  )
  return rows.map((r) => ({ ...recordOf(r.id, r), kind: r.kind, createdMicros: BigInt(r.created_us) }))
}

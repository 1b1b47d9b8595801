import type { Queryable } from './sql.ts'
import { contextField } from './inspect.store.ts'
import { literal, literals, type ContextEquals } from './read.store.ts'

/*
 * The runtime's SQL API: fragments of SQL the app composes into its own statements, where an
 * answer needs the runtime's rows inside the app's statement (a join in a hot read, a check under
 * the app's row lock, a condition of the app's own insert) and a separate call would cost a round
 * trip. The runtime's tables are named here, not in the app: what an actor row offers, what makes
 * a node gone and how many actors are told at once stay the runtime's to define and to change.
 * A fragment is plain text without parameters of its own; the caller's expressions (an id column,
 * a parameter `$n`) are spliced in as given, so they must be SQL the caller wrote, never input.
 */

/**
 * The actor rows as a relation the app may read: a derived table to give an alias, with the
 * columns `id`, `kind`, `account_id`, `status`, `context` (the machine's context, jsonb),
 * `created_at`, `updated_at` and `version` (moved by every change of the actor's state), and
 * nothing else of the row (its snapshot's other parts, its shard, its stuck marks). With `kind`,
 * only actors of that kind (a literal, so the partial indexes on that kind apply).
 *
 * Postgres pulls a derived table this simple up into the statement that reads it, so plans are
 * those of the table itself: `x.context->>'agentId'` is the expression
 * `snapshot->'context'->>'agentId'` the indexes on `actor` are written in (`actor_named_agent`,
 * `actor_automation_agent`, `actor_run_automation`, …), and a join on `x.id` reads the primary
 * key. It may stand on the nullable side of a left join (every column is strict in the row).
 *
 * @example
 * `select a.id, x.status from agent a join ${actorRowsSql()} x on x.id = a.id::text where a.id = $1`
 * `select id, context as ctx from ${actorRowsSql({ kind: 'automation' })} a where a.context->>'agentId' = $1`
 */
export function actorRowsSql({ kind }: { kind?: string } = {}): string {
  const where = kind === undefined ? '' : ` where kind = ${literal(kind)}`
  return `(select id, kind, account_id, status, snapshot->'context' as context, created_at, updated_at, version from actor${where})`
}

/**
 * Whether the node `nodeIdExpr` names (a `service_node` id) is gone, as a boolean expression: it
 * was retired (a clean stop, or its process seen gone from its host) or its heartbeat ran out.
 * An id no node registered under is not gone (false): nothing says it stopped. These are the
 * `stopped` and `expired` of `runtime.inspect`'s nodes (listNodes, shardLease.store.ts).
 *
 * @example
 * `update job set holder = $1 where id = $2 and ${nodeGoneSql('job.holder')}`
 */
export function nodeGoneSql(nodeIdExpr: string): string {
  return `exists (select 1 from service_node n where n.id = ${nodeIdExpr} and (n.stopped_at is not null or n.expires_at <= now()))`
}

/**
 * Whether the node `nodeIdExpr` names is live, as a boolean expression: registered, not retired
 * and its heartbeat current (an `active` or `leaving` node of `runtime.inspect`). An unknown id
 * is neither live nor gone.
 */
export function nodeLiveSql(nodeIdExpr: string): string {
  return `exists (select 1 from service_node n where n.id = ${nodeIdExpr} and n.stopped_at is null and n.expires_at > now())`
}

/**
 * The trace context (what the app's TraceHooks stored: a W3C traceparent in this service) of
 * the last transition of actor `actorIdExpr` committed at or before `atExpr`, as a scalar
 * expression, null when there is none or it ran outside any trace. A row the app wrote in the
 * statement that committed a transition (a status hook's, whose `now()` is the journal entry's
 * `at`) names that transition's trace so, and its later work (a webhook's delivery) continues it.
 * Reads the journal's primary key backwards from the actor's newest entry.
 *
 * @example
 * `select e.id, ${actorTraceAtSql('e.resource_id', 'e.created_at')} as trace from account_event e where e.seq = $1`
 */
export function actorTraceAtSql(actorIdExpr: string, atExpr: string): string {
  return `(select j.trace from actor_journal j where j.actor_id = ${actorIdExpr} and j.at <= ${atExpr} order by j.seq desc limit 1)`
}

export type TellMatching = {
  /** The kind of the actors told (a literal: the partial indexes on it apply). */
  kind: string
  /** The context field they name (its expression index applies). */
  named: ContextEquals
  /** The states whose actors are left out (ended ones, typically). */
  statusNotIn: readonly string[]
  /** The event each of them is sent. */
  event: { type: string }
  /** Each delivery's dedupe key is `<dedupePrefix>:<actor id>`: telling them again adds nothing. */
  dedupePrefix: string
}

/**
 * Sends `event` to every actor of a kind whose context names a value and whose state is not one
 * of `statusNotIn`, in one statement on the caller's connection (inside its transaction, if it
 * has one): an inbox row each, deduplicated by `<dedupePrefix>:<actor id>`; the runtime's inbox
 * poll delivers them. Answers how many were told (those told before under the same prefix are
 * not counted again).
 *
 * @example
 * await tellMatching(tx, { kind: 'automation', named: { key: 'agentId', value: agentId }, statusNotIn: ['completed', 'cancelled'], event: { type: 'automation.cancel' }, dedupePrefix: `market:${listingId}` })
 */
export async function tellMatching(db: Queryable, { kind, named, statusNotIn, event, dedupePrefix }: TellMatching): Promise<number> {
  const { rowCount } = await db.query(
    `insert into actor_inbox (actor_id, account_id, event, dedupe_key)
     select id, account_id, $2::jsonb, $3 || ':' || id from actor
      where kind = ${literal(kind)} and ${contextField(named.key)} = $1 and status not in ${literals(statusNotIn)}
     on conflict (dedupe_key) do nothing`,
    [named.value, JSON.stringify(event), dedupePrefix],
  )
  return rowCount ?? 0
}

/**
 * Sends an event to each actor a query names, as a statement: `rowsSql` is a `select` of
 * `(actor id, account id, event jsonb, dedupe key)` rows, each an inbox row (one already sent
 * under its dedupe key adds nothing); the runtime's inbox poll delivers them. For the app's SQL
 * that runs inside a statement of the runtime's (a status hook, src/actors/runtime/schema/statusHooks.ts).
 *
 * @example
 * sendEachSql(`select m.id, m.account_id, $1::jsonb, 'x:' || m.id from ${actorRowsSql({ kind: 'automation' })} m where m.status = 'armed'`)
 */
export function sendEachSql(rowsSql: string): string {
  return `insert into actor_inbox (actor_id, account_id, event, dedupe_key)
  ${rowsSql}
  on conflict (dedupe_key) do nothing`
}

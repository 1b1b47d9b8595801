import { contextField, contextKey } from '../inspect.store.ts'
import { contextPath, literal, literals } from '../read.store.ts'

/*
 * Indexes the app declares on the runtime's tables for its own queries: which context fields it
 * looks actors up by, which effect kinds it counts. What to index is the app's knowledge; how an
 * actor's context and an effect are stored is the runtime's, so the runtime writes the DDL and
 * the app's migrations run it. Each expression is written exactly as the runtime's reads write it
 * (`contextField` of inspect.store.ts, the paths of read.store.ts, `actorRowsSql` of sqlApi.ts),
 * because the planner uses an expression index only for the same expression.
 */

/** A context key or path segment: an identifier, never input. */
/** An index name: a lowercase identifier. */
function indexName(name: string): string {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`Not an index name: ${name}`)
  return name
}

/**
 * How a query writes a context path: `arrows` is `snapshot->'context'->'a'->>'b'` (what
 * `contextField` and `actorRowsSql`'s `context->>'b'` read as), `brace` is
 * `snapshot #>> '{context,a,b}'` (what read.store.ts's context paths read as).
 */
export type ContextPathForm = 'arrows' | 'brace'

/** The text at a context path, in the form the queries use. */
function contextText(path: readonly string[], form: ContextPathForm): string {
  if (path.length === 0) throw new Error('An empty context path')
  if (form === 'brace') return `snapshot #>> ${contextPath(path)}`
  if (path.length === 1) return contextField(path[0]!)
  const keys = path.map(contextKey)
  return `snapshot->'context'${keys.slice(0, -1).map((k) => `->'${k}'`).join('')}->>'${keys.at(-1)}'`
}

/** The jsonb at a context path (for a type test), in the form the queries use. */
function contextJson(path: readonly string[], form: ContextPathForm): string {
  if (form === 'brace') return `snapshot #> ${contextPath(path)}`
  return `snapshot->'context'${path.map((k) => `->'${contextKey(k)}'`).join('')}`
}

/** A condition on the actor's context: a path that is set, holds an object, or equals a literal. */
export type ContextCondition =
  | { path: readonly string[]; is: 'set' | 'object' }
  | { path: readonly string[]; equals: string }

export type ContextIndex = {
  name: string
  unique?: boolean
  /** Only actors of this kind, or of these kinds (literals, so a query naming the kind uses it). */
  kind?: string | readonly string[]
  /** Only actors in these states. */
  status?: readonly string[]
  /** Columns of the actor row indexed before the context path (`status`, `account_id`). */
  leading?: ReadonlyArray<'status' | 'account_id'>
  /** The context path indexed (`['agentId']`, `['trigger', 'leaderAgentId']`). */
  path: readonly string[]
  /** How the queries write the path (default `arrows`); the conditions take the same form. */
  form?: ContextPathForm
  /** The path's text descending. */
  descending?: boolean
  /** Then newest first, `created_at desc, id desc`: the keyset pages of a list of actors. */
  newestFirst?: boolean
  /** More conditions on the context, after the kind and states. */
  where?: readonly ContextCondition[]
}

/**
 * The DDL of an index on the actors' context: the app says which field its queries read, of
 * which kinds and states; the runtime writes it in the form those queries read it.
 *
 * @example
 * contextIndexSql({ name: 'actor_run_agent', kind: 'run', path: ['agentId'], newestFirst: true })
 * // create index actor_run_agent on actor ((snapshot->'context'->>'agentId'), created_at desc, id desc) where kind = 'run'
 */
export function contextIndexSql(ix: ContextIndex): string {
  const form = ix.form ?? 'arrows'
  const columns: string[] = [...(ix.leading ?? []), `(${contextText(ix.path, form)})${ix.descending ? ' desc' : ''}`]
  if (ix.newestFirst) columns.push('created_at desc', 'id desc')
  const where: string[] = []
  if (typeof ix.kind === 'string') where.push(`kind = ${literal(ix.kind)}`)
  else if (ix.kind) where.push(`kind in ${literals(ix.kind)}`)
  if (ix.status) where.push(`status in ${literals(ix.status)}`)
  for (const c of ix.where ?? []) {
    if ('equals' in c) where.push(`${contextText(c.path, form)} = ${literal(c.equals)}`)
    else if (c.is === 'set') where.push(`${contextText(c.path, form)} is not null`)
    else where.push(`jsonb_typeof(${contextJson(c.path, form)}) = 'object'`)
  }
  const unique = ix.unique ? 'unique ' : ''
  return `create ${unique}index ${indexName(ix.name)} on actor (${columns.join(', ')})${where.length ? ` where ${where.join(' and ')}` : ''}`
}

/**
 * The DDL of an index on the effects of one kind by the time they were created: what the
 * runtime's counts of work by effect (`runtimeCounts`, inspectCounts.store.ts) read for the
 * kinds the app counts.
 *
 * @example
 * effectKindIndexSql({ name: 'effect_fire_created', kind: 'automation.fire' })
 * // create index effect_fire_created on effect (created_at) where kind = 'automation.fire'
 */
export function effectKindIndexSql({ name, kind }: { name: string; kind: string }): string {
  return `create index ${indexName(name)} on effect (created_at) where kind = ${literal(kind)}`
}

import type pg from 'pg'

/**
 * The runtime's inspection reads (the operator console, metrics): actors, their inbox, timers,
 * effects and journal, dead letters and counts. Generic: kinds, ids, states and snapshots; what
 * an actor means to the app (an agent, an account) is the app's to join.
 */

type Db = Pick<pg.Pool, 'query'>
/** Timestamps arrive as strings through MikroORM's pool type parsers; the API speaks ISO 8601. */
const iso = (v: string | Date) => new Date(v).toISOString()

/** A context key checked before it is inlined in SQL: letters, digits and underscores only. */
export function contextKey(key: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(key)) throw new Error(`Not a context key: ${key}`)
  return key
}

/** A context field as SQL (`snapshot->'context'->>'agentId'`): inlined, so an expression index on it applies. */
export function contextField(key: string, alias = ''): string {
  return `${alias}snapshot->'context'->>'${contextKey(key)}'`
}

/** Actors whose context names an id under `key` (`{ key: 'agentId', id }`), and with `kind` the actor of that id itself. */
export type NamedBy = { key: string; id: string; kind?: string | undefined }

export type ActorQuery = {
  kind?: string | undefined
  /** A state name; `stuck` lists the actors marked for an operator (dead letters, unreadable snapshots). */
  status?: string | undefined
  /** In one of these states of its kind (each kind's failure states, for "failed only"). */
  inStates?: Record<string, readonly string[]> | undefined
  accountId?: string | undefined
  namedBy?: NamedBy | undefined
  since?: string | undefined
  until?: string | undefined
  /** Any of: these ids, the actors of these effects, or a kind's context field equal to a value (lower-cased). */
  match?: { ids?: string[]; effectIds?: string[]; context?: { kind: string; key: string; value: string } } | undefined
  /** List after this id (ids ascending). */
  after?: string | undefined
  limit: number
}

type ActorRow = {
  id: string
  kind: string
  account_id: string
  status: string
  version: string
  stuck_reason: string | null
  parent_id: string | null
  updated_at: Date | string
  created_at: Date | string
  compacted_at?: string | Date | null
}

export const actorSummary = (r: ActorRow) => ({
  id: r.id,
  kind: r.kind,
  accountId: r.account_id,
  status: r.status,
  version: Number(r.version),
  stuckReason: r.stuck_reason,
  parentId: r.parent_id,
  createdAt: iso(r.created_at),
  updatedAt: iso(r.updated_at),
  /** When the retention compacted its history (journal, effects, inbox, timers gone; the row kept), else null. */
  compactedAt: r.compacted_at ? iso(r.compacted_at) : null,
})
export type ActorSummary = ReturnType<typeof actorSummary>

const COLUMNS = 'id, kind, account_id, status, version, stuck_reason, parent_id, created_at, updated_at, compacted_at'

function matchCondition(m: NonNullable<ActorQuery['match']>, push: (v: unknown) => number): string {
  const any: string[] = []
  if (m.ids) any.push(`id = any($${push(m.ids)}::text[])`)
  if (m.effectIds) any.push(`id in (select e.actor_id from effect e where e.id = any($${push(m.effectIds)}::text[]))`)
  if (m.context) any.push(`(kind = $${push(m.context.kind)} and lower(${contextField(m.context.key)}) = $${push(m.context.value)})`)
  return any.length ? `(${any.join(' or ')})` : 'false'
}

/**
 * Actors of every account, ids ascending, filtered; one more than `limit` tells the caller a
 * next page exists. The account filter reads `actor_account`, kind and state `actor_kind_status`.
 *
 * @example
 * const rows = await listActors(pool, { kind: 'launch', status: 'failed', limit: 50 })
 */
export async function listActors(db: Db, f: ActorQuery): Promise<ActorSummary[]> {
  const params: unknown[] = [f.limit + 1]
  const push = (v: unknown) => params.push(v)
  const where: string[] = []
  if (f.kind) where.push(`kind = $${push(f.kind)}`)
  if (f.status === 'stuck') where.push('stuck_at is not null')
  else if (f.status) where.push(`status = $${push(f.status)}`)
  if (f.inStates) {
    const kinds = Object.entries(f.inStates).filter(([, states]) => states.length > 0)
    where.push(kinds.length ? `(${kinds.map(([k, states]) => `(kind = $${push(k)} and status = any($${push(states)}::text[]))`).join(' or ')})` : 'false')
  }
  if (f.accountId) where.push(`account_id = $${push(f.accountId)}`)
  if (f.namedBy) {
    const p = push(f.namedBy.id)
    const self = f.namedBy.kind ? `(kind = $${push(f.namedBy.kind)} and id = $${p}) or ` : ''
    where.push(`(${self}${contextField(f.namedBy.key)} = $${p})`)
  }
  if (f.since) where.push(`created_at >= $${push(f.since)}`)
  if (f.until) where.push(`created_at < $${push(f.until)}`)
  if (f.match) where.push(matchCondition(f.match, push))
  if (f.after) where.push(`id > $${push(f.after)}`)
  const { rows } = await db.query<ActorRow>(
    `select ${COLUMNS} from actor ${where.length ? `where ${where.join(' and ')}` : ''} order by id limit $1`,
    params,
  )
  return rows.map(actorSummary)
}

/** One actor with its snapshot and live timers, or undefined. */
export async function findActor(db: Db, id: string) {
  const { rows } = await db.query<ActorRow & { machine_version: number; state_value: unknown; snapshot: unknown; timers: unknown }>(
    `select ${COLUMNS}, machine_version, state_value, snapshot, timers from actor where id = $1`,
    [id],
  )
  const r = rows[0]
  return r && { ...actorSummary(r), machineVersion: r.machine_version, stateValue: r.state_value, snapshot: r.snapshot, timers: r.timers }
}
export type ActorInFull = NonNullable<Awaited<ReturnType<typeof findActor>>>

/** The columns of an effect the console shows; `in_flight`: an attempt holds its lease now. */
export const EFFECT_COLUMNS = `id, kind, params, status, external_ref, result, attempts, last_error, next_attempt_at, created_at, updated_at,
  (claimed_by is not null and lease_until > now()) as in_flight, attempt_log, trace`
const ENDED = new Set(['done', 'failed'])

/**
 * An effect as the console shows it. `attempts` is the stored count of failed attempts that were
 * retried; `attemptsMade` the attempts that ended (for an ended effect, its last one too);
 * `lastAttemptAt` when the last of them ended (the row's last update once one did); `endedAt`
 * when the effect ended (null while open); `failedAttempts` the retried ones (the last 20).
 */
export function effectView(e: Record<string, unknown>) {
  const ended = ENDED.has(e.status as string)
  const attempts = Number(e.attempts)
  return {
    id: e.id as string, kind: e.kind as string, params: e.params as unknown, status: e.status as string, externalRef: e.external_ref as string | null,
    result: e.result as unknown, attempts, attemptsMade: ended ? attempts + 1 : attempts, inFlight: Boolean(e.in_flight),
    lastError: e.last_error as string | null, nextAttemptAt: iso(e.next_attempt_at as string),
    lastAttemptAt: ended || attempts > 0 ? iso(e.updated_at as string) : null, endedAt: ended ? iso(e.updated_at as string) : null,
    failedAttempts: ((e.attempt_log ?? []) as { attempt: number; endedAt: string; error: string }[]).map((a) => ({ ...a, endedAt: iso(a.endedAt) })),
    createdAt: iso(e.created_at as string), updatedAt: iso(e.updated_at as string), trace: traceOf(e),
  }
}
/** The trace context stored with a row (the app's TraceHooks wrote it: opaque here), null when none was. */
const traceOf = (r: Record<string, unknown>) => (r.trace as string | null | undefined) ?? null
/** A journal entry; `trace`: the trace context its transition ran in. */
export const journalView = (j: Record<string, unknown>) => ({ seq: Number(j.seq), event: j.event as { type: string }, stateValue: j.state_value as unknown, at: iso(j.at as string), trace: traceOf(j) })
/** The journal's columns `journalView` reads. */
export const JOURNAL_COLUMNS = 'seq, event, state_value, at, trace'
/** The type a stored event names (what a retry would send), null when it names none. */
export const eventTypeOf = (event: unknown): string | null => {
  const type = (event as { type?: unknown } | null)?.type
  return typeof type === 'string' ? type : null
}
export const deadLetterView = (d: Record<string, unknown>) => ({
  seq: Number(d.seq), event: d.event as unknown, eventType: eventTypeOf(d.event), error: d.error as string, deadAt: iso(d.dead_at as string),
  resolvedAt: d.resolved_at ? iso(d.resolved_at as string) : null, resolution: d.resolution as string | null, trace: traceOf(d),
})
export const timerView = (t: Record<string, unknown>) => ({ key: t.timer_key as string, generation: Number(t.generation), dueAt: iso(t.due_at as string), event: t.event as unknown })

const DEAD_LETTERS = `select seq, event, error, dead_at, resolved_at, resolution, trace from actor_inbox
  where actor_id = $1 and dead_at is not null order by seq desc limit 100`

/** The last 100 timers, effects, journal entries and dead letters of one actor (newest first); older ones: `timelinePage`. */
export async function actorDetail(db: Db, id: string) {
  const [timers, effects, journal, dead] = await Promise.all([
    db.query('select timer_key, generation, due_at, event from actor_timer where actor_id = $1 order by due_at', [id]),
    db.query(`select ${EFFECT_COLUMNS} from effect where actor_id = $1 order by created_at desc limit 100`, [id]),
    db.query(`select ${JOURNAL_COLUMNS} from actor_journal where actor_id = $1 order by seq desc limit 100`, [id]),
    db.query(DEAD_LETTERS, [id]),
  ])
  return {
    timers: timers.rows.map(timerView),
    effects: effects.rows.map(effectView),
    journal: journal.rows.map(journalView),
    deadLetters: dead.rows.map(deadLetterView),
  }
}

/** The actor's parent and children (`actor_parent`, the first 100) and its latest 100 dead letters. */
export async function actorRelations(db: Db, id: string, parentId: string | null) {
  const [parent, children, dead] = await Promise.all([
    parentId ? db.query<ActorRow>(`select ${COLUMNS} from actor where id = $1`, [parentId]) : { rows: [] as ActorRow[] },
    db.query<ActorRow>(`select ${COLUMNS} from actor where parent_id = $1 order by created_at limit 100`, [id]),
    db.query(DEAD_LETTERS, [id]),
  ])
  return { parent: parent.rows[0] ? actorSummary(parent.rows[0]) : null, children: children.rows.map(actorSummary), deadLetters: dead.rows.map(deadLetterView) }
}

/** The ids of every effect of an actor (what the app's records of an effect's work are keyed by). */
export async function effectIdsOf(db: Db, actorId: string): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>('select id from effect where actor_id = $1', [actorId])
  return rows.map((r) => r.id)
}

/**
 * Recent actors of a kind whose context names an id (`namedBy.key`), newest first, each with its
 * next timer (an automation's next firing).
 */
export async function actorsOfKindNaming(db: Db, kind: string, { key, id }: NamedBy, limit = 10) {
  const { rows } = await db.query<ActorRow & { next_timer_at: Date | string | null }>(
    `select ${COLUMNS}, (select min(t.due_at) from actor_timer t where t.actor_id = actor.id) as next_timer_at
       from actor where kind = $1 and ${contextField(key)} = $2 order by created_at desc, id desc limit $3`,
    [kind, id, limit],
  )
  return rows.map((r) => ({ ...actorSummary(r), nextTimerAt: r.next_timer_at ? iso(r.next_timer_at) : null }))
}

/** The actors whose context names an id (not that id's own actor), newest first, the latest `limit`. */
export async function actorsNaming(db: Db, { key, id }: NamedBy, limit = 100): Promise<ActorSummary[]> {
  const { rows } = await db.query<ActorRow>(
    `select ${COLUMNS} from actor where ${contextField(key)} = $1 and id <> $1 order by created_at desc, id desc limit $2`,
    [id, limit],
  )
  return rows.map(actorSummary)
}

export type NamingPageQuery = NamedBy & { kinds: string[]; limit: number; before?: { createdAt: string; id: string } | undefined }

/**
 * A page of the actors of some kinds whose context names an id, newest first (the index on the
 * context field, created_at, id), after the `before` cursor: one more than `limit` tells the
 * caller a next page exists. Each with its context, its parent's kind and state, and
 * `createdText`, Postgres' own text of its creation (to the microsecond), for a cursor.
 *
 * @example
 * const rows = await actorsNamingPage(pool, { key: 'agentId', id: agentId, kinds: ['walletop', 'launch'], limit: 20 })
 */
export async function actorsNamingPage(db: Db, { key, id, kinds, limit, before }: NamingPageQuery) {
  const params: unknown[] = [id, kinds, limit + 1]
  const after = before ? `and (x.created_at, x.id) < ($4::timestamptz, $5)` : ''
  if (before) params.push(before.createdAt, before.id)
  const { rows } = await db.query<ActorRow & { created_text: string; ctx: Record<string, unknown> | null; parent_kind: string | null; parent_status: string | null }>(
    `select x.id, x.kind, x.account_id, x.status, x.version, x.stuck_reason, x.parent_id, x.created_at, x.updated_at, x.created_at::text as created_text,
            x.snapshot->'context' as ctx, p.kind as parent_kind, p.status as parent_status
       from actor x left join actor p on p.id = x.parent_id
      where ${contextField(key, 'x.')} = $1 and x.kind = any($2::text[]) ${after}
      order by x.created_at desc, x.id desc limit $3`,
    params,
  )
  return rows.map((r) => ({
    ...actorSummary(r),
    context: r.ctx ?? {},
    createdText: r.created_text,
    parent: r.parent_id && r.parent_kind !== null ? { id: r.parent_id, kind: r.parent_kind, status: r.parent_status! } : null,
  }))
}

/** Dead letters no operator resolved yet, newest first (`actor_inbox_dead_open`), with their actor's kind. */
export async function listOpenDeadLetters(db: Db, limit: number) {
  const { rows } = await db.query(
    `select i.seq, i.actor_id, i.account_id, i.event, i.error, i.dead_at, a.kind, a.status
       from actor_inbox i join actor a on a.id = i.actor_id
      where i.dead_at is not null and i.resolved_at is null order by i.seq desc limit $1`,
    [limit],
  )
  return rows.map((r) => ({
    seq: Number(r.seq), actorId: r.actor_id as string, accountId: r.account_id as string, kind: r.kind as string, status: r.status as string,
    event: r.event as unknown, eventType: eventTypeOf(r.event), error: r.error as string, deadAt: iso(r.dead_at),
  }))
}

/** An open dead letter's event and its actor's kind (undefined when there is none, or it was resolved). */
export async function openDeadLetter(db: Db, seq: number): Promise<{ kind: string; event: unknown } | undefined> {
  const { rows } = await db.query<{ kind: string; event: unknown }>(
    `select a.kind, i.event from actor_inbox i join actor a on a.id = i.actor_id
      where i.seq = $1 and i.dead_at is not null and i.resolved_at is null`,
    [seq],
  )
  return rows[0]
}

/** The account an actor belongs to and its state (`kind`: only an actor of that kind), or undefined. */
export async function actorOwner(db: Db, id: string, kind?: string): Promise<{ accountId: string; status: string } | undefined> {
  const { rows } = await db.query<{ account_id: string; status: string }>(
    `select account_id, status from actor where id = $1 ${kind ? 'and kind = $2' : ''}`,
    kind ? [id, kind] : [id],
  )
  return rows[0] && { accountId: rows[0].account_id, status: rows[0].status }
}

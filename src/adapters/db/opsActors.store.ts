import type pg from 'pg'

/** Timestamps arrive as strings through MikroORM's pool type parsers; the API speaks ISO 8601. */
const iso = (v: string | Date) => new Date(v).toISOString()

export type ActorListFilter = {
  kind?: string | undefined
  /** A state name; `stuck` lists the actors marked for an operator (dead letters, unreadable snapshots). */
  status?: string | undefined
  /** "Failed only": actors in a failure state of their kind (`failureStates`, each ActorKind's). */
  failed?: boolean | undefined
  accountId?: string | undefined
  /** The agent itself and every actor whose context names it (launches, operations, turns, runs). */
  agentId?: string | undefined
  since?: string | undefined
  until?: string | undefined
  /** An actor id, a transaction hash (the actor whose effect sent it) or an address (an agent's wallet, a launched token). */
  q?: string | undefined
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
})
export type ActorSummary = ReturnType<typeof actorSummary>

const COLUMNS = 'id, kind, account_id, status, version, stuck_reason, parent_id, created_at, updated_at'

/** The search term as a condition: a tx hash, an address, else an actor id. */
function searchCondition(q: string, push: (v: unknown) => number): string {
  const term = q.trim().toLowerCase()
  if (/^0x[0-9a-f]{64}$/.test(term)) {
    const p = push(term)
    return `id in (select e.actor_id from chain_tx t join effect e on e.id in (t.request_id, t.effect_id) where t.hash = $${p})`
  }
  if (/^0x[0-9a-f]{40}$/.test(term)) {
    const p = push(term)
    return `(id in (select id::text from agent where lower(wallet_address) = $${p})
             or (kind = 'launch' and lower(snapshot->'context'->>'tokenAddress') = $${p}))`
  }
  return `id = $${push(q.trim())}`
}

/**
 * Actors of every account, ids ascending, filtered; one more than `limit` tells the caller a
 * next page exists. The account filter reads `actor_account`, kind and state `actor_kind_status`
 * (also for `failed`: one (kind, states) condition per kind that has failure states).
 *
 * @example
 * const rows = await listActors(pool, { kind: 'launch', status: 'failed', limit: 50 })
 * const failed = await listActors(pool, { failed: true, limit: 50 }, { run: ['failed', 'budget_exhausted'], automation: ['error'] })
 */
export async function listActors(pool: pg.Pool, f: ActorListFilter, failureStates: Record<string, readonly string[]> = {}): Promise<ActorSummary[]> {
  const params: unknown[] = [f.limit + 1]
  const push = (v: unknown) => params.push(v)
  const where: string[] = []
  if (f.kind) where.push(`kind = $${push(f.kind)}`)
  if (f.status === 'stuck') where.push('stuck_at is not null')
  else if (f.status) where.push(`status = $${push(f.status)}`)
  if (f.failed) {
    const kinds = Object.entries(failureStates).filter(([, states]) => states.length > 0)
    where.push(kinds.length ? `(${kinds.map(([k, states]) => `(kind = $${push(k)} and status = any($${push(states)}::text[]))`).join(' or ')})` : 'false')
  }
  if (f.accountId) where.push(`account_id = $${push(f.accountId)}`)
  if (f.agentId) {
    const p = push(f.agentId)
    where.push(`((kind = 'agent' and id = $${p}) or snapshot->'context'->>'agentId' = $${p})`)
  }
  if (f.since) where.push(`created_at >= $${push(f.since)}`)
  if (f.until) where.push(`created_at < $${push(f.until)}`)
  if (f.q) where.push(searchCondition(f.q, push))
  if (f.after) where.push(`id > $${push(f.after)}`)
  const { rows } = await pool.query<ActorRow>(
    `select ${COLUMNS} from actor ${where.length ? `where ${where.join(' and ')}` : ''} order by id limit $1`,
    params,
  )
  return rows.map(actorSummary)
}

/** One actor's row with its snapshot, or undefined. */
export async function findActorRow(pool: pg.Pool, id: string) {
  const { rows } = await pool.query<ActorRow & { machine_version: number; state_value: unknown; snapshot: unknown; timers: unknown }>(
    `select ${COLUMNS}, machine_version, state_value, snapshot, timers from actor where id = $1`,
    [id],
  )
  return rows[0]
}

/** The columns of an effect the console shows; `in_flight`: an attempt holds its lease now. */
export const EFFECT_COLUMNS = `id, kind, params, status, external_ref, result, attempts, last_error, next_attempt_at, created_at, updated_at,
  (claimed_by is not null and lease_until > now()) as in_flight, attempt_log`
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
    createdAt: iso(e.created_at as string), updatedAt: iso(e.updated_at as string),
  }
}
export const journalView = (j: Record<string, unknown>) => ({ seq: Number(j.seq), event: j.event as { type: string }, stateValue: j.state_value as unknown, at: iso(j.at as string) })
/** The type a stored event names (what a retry would send), null when it names none. */
export const eventTypeOf = (event: unknown): string | null => {
  const type = (event as { type?: unknown } | null)?.type
  return typeof type === 'string' ? type : null
}
export const deadLetterView = (d: Record<string, unknown>) => ({
  seq: Number(d.seq), event: d.event as unknown, eventType: eventTypeOf(d.event), error: d.error as string, deadAt: iso(d.dead_at as string),
  resolvedAt: d.resolved_at ? iso(d.resolved_at as string) : null, resolution: d.resolution as string | null,
})
export const timerView = (t: Record<string, unknown>) => ({ key: t.timer_key as string, generation: Number(t.generation), dueAt: iso(t.due_at as string), event: t.event as unknown })

/** The last 100 timers, effects, journal entries and dead letters of one actor (newest first); older ones: `timelinePage`. */
export async function actorDetail(pool: pg.Pool, id: string) {
  const [timers, effects, journal, dead] = await Promise.all([
    pool.query('select timer_key, generation, due_at, event from actor_timer where actor_id = $1 order by due_at', [id]),
    pool.query(`select ${EFFECT_COLUMNS} from effect where actor_id = $1 order by created_at desc limit 100`, [id]),
    pool.query('select seq, event, state_value, at from actor_journal where actor_id = $1 order by seq desc limit 100', [id]),
    pool.query(
      `select seq, event, error, dead_at, resolved_at, resolution from actor_inbox
        where actor_id = $1 and dead_at is not null order by seq desc limit 100`,
      [id],
    ),
  ])
  return {
    timers: timers.rows.map(timerView),
    effects: effects.rows.map(effectView),
    journal: journal.rows.map(journalView),
    deadLetters: dead.rows.map(deadLetterView),
  }
}

/** The actor's parent and children (`actor_parent`), its latest 100 dead letters, and the transactions its effects sent, replacements included. */
export async function actorRelations(pool: pg.Pool, id: string, parentId: string | null) {
  const [parent, children, dead, txs] = await Promise.all([
    parentId ? pool.query<ActorRow>(`select ${COLUMNS} from actor where id = $1`, [parentId]) : { rows: [] as ActorRow[] },
    pool.query<ActorRow>(`select ${COLUMNS} from actor where parent_id = $1 order by created_at limit 100`, [id]),
    pool.query(
      `select seq, event, error, dead_at, resolved_at, resolution from actor_inbox
        where actor_id = $1 and dead_at is not null order by seq desc limit 100`,
      [id],
    ),
    pool.query(
      `select t.id, t.kind, t.nonce, t.hash, t.status, t.replaced_by, r.hash as replaced_by_hash, t.block_number, t.gas_used::text,
              t.max_fee_per_gas::text, t.max_priority_fee_per_gas::text, t.effective_gas_price::text,
              (t.gas_used * t.effective_gas_price)::text as fee_wei, t.from_address, t.to_address, t.error, t.created_at, t.updated_at
         from chain_tx t left join chain_tx r on r.id = t.replaced_by where t.request_id in (select e.id from effect e where e.actor_id = $1)
        order by t.nonce, t.created_at limit 100`,
      [id],
    ),
  ])
  return {
    parent: parent.rows[0] ? actorSummary(parent.rows[0]) : null,
    children: children.rows.map(actorSummary),
    deadLetters: dead.rows.map(deadLetterView),
    transactions: txs.rows.map((t) => ({
      id: t.id as string, kind: t.kind as string, nonce: Number(t.nonce), hash: t.hash as string, status: t.status as string,
      replacedBy: t.replaced_by as string | null, replacedByHash: t.replaced_by_hash as string | null,
      blockNumber: t.block_number === null ? null : Number(t.block_number),
      gasUsed: t.gas_used as string | null, effectiveGasPrice: t.effective_gas_price as string | null, feeWei: t.fee_wei as string | null,
      maxFeePerGas: t.max_fee_per_gas as string, maxPriorityFeePerGas: t.max_priority_fee_per_gas as string,
      from: t.from_address as string, to: t.to_address as string | null,
      error: t.error as string | null, createdAt: iso(t.created_at), updatedAt: iso(t.updated_at),
    })),
  }
}

/**
 * Recent actors of a kind that name an agent in their context (its runs, chat turns, automations),
 * newest first, each with its next timer (an automation's next firing).
 */
export async function actorsOfAgent(pool: pg.Pool, kind: string, agentId: string, limit = 10) {
  const { rows } = await pool.query<ActorRow & { next_timer_at: Date | string | null }>(
    `select ${COLUMNS}, (select min(t.due_at) from actor_timer t where t.actor_id = actor.id) as next_timer_at
       from actor where kind = $1 and snapshot->'context'->>'agentId' = $2 order by created_at desc, id desc limit $3`,
    [kind, agentId, limit],
  )
  return rows.map((r) => ({ ...actorSummary(r), nextTimerAt: r.next_timer_at ? iso(r.next_timer_at) : null }))
}

/** Dead letters no operator resolved yet, newest first (`actor_inbox_dead_open`), with their actor's kind. */
export async function listOpenDeadLetters(pool: pg.Pool, limit: number) {
  const { rows } = await pool.query(
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

/** The block of the agent's first transaction in the outbox (null before any). */
export async function firstAgentTxBlock(pool: pg.Pool, agentId: string): Promise<bigint | null> {
  const { rows } = await pool.query<{ b: string | null }>('select min(block_number)::text as b from chain_tx where agent_id = $1', [agentId])
  return rows[0]?.b ? BigInt(rows[0].b) : null
}

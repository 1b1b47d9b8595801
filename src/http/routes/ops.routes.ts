import { Router } from '@koa/router'
import { z } from 'zod'
import type { AppDeps } from '../appDeps.ts'
import { ok } from '../respond.ts'
import { limitQuery, parse, rejectQuery } from '../validate.ts'
import { principalOf, requireOperator } from '../middleware/auth.ts'
import { NotFoundError, ValidationError } from '../../domain/errors.ts'
import { auditActorOf, listAudit } from '../../domain/agents/auditTrail.ts'

export const listQuery = z.strictObject({
  kind: z.string().regex(/^[a-z-]{1,32}$/).optional(),
  status: z.string().regex(/^[a-z_]{1,32}$/).optional(),
  limit: limitQuery,
  cursor: z.string().max(200).optional(),
})

export const auditQuery = z.strictObject({
  accountId: z.uuid().optional(),
  subjectId: z.string().regex(/^[A-Za-z0-9:._-]{1,200}$/).optional(),
  limit: limitQuery,
  cursor: z.string().max(200).optional(),
})

/** Body of POST /ops/tokens/:address/verified. */
export const verifiedBody = z.strictObject({ verified: z.boolean() })

type ActorListRow = {
  id: string
  kind: string
  account_id: string
  status: string
  version: string
  stuck_reason: string | null
  updated_at: Date | string
  created_at: Date | string
}

/** Timestamps arrive as strings through MikroORM's pool type parsers; the API speaks ISO 8601. */
const iso = (v: string | Date) => new Date(v).toISOString()

const actorSummary = (r: ActorListRow) => ({
  id: r.id,
  kind: r.kind,
  accountId: r.account_id,
  status: r.status,
  version: Number(r.version),
  stuckReason: r.stuck_reason,
  createdAt: new Date(r.created_at).toISOString(),
  updatedAt: new Date(r.updated_at).toISOString(),
})

/** Operator views of every actor across accounts: list by kind/status, and one actor in full. */
export function opsRoutes(deps: AppDeps): Router {
  const router = new Router({ prefix: '/ops' })
  router.use(requireOperator())

  router.get('/actors', async (ctx) => {
    const q = parse(listQuery, ctx.query)
    const params: unknown[] = [q.limit + 1]
    const where: string[] = []
    if (q.kind) where.push(`kind = $${params.push(q.kind)}`)
    // `stuck` is not a state: it lists the actors marked for an operator (dead letters, unreadable snapshots).
    if (q.status === 'stuck') where.push('stuck_at is not null')
    else if (q.status) where.push(`status = $${params.push(q.status)}`)
    if (q.cursor) {
      let after: string
      try {
        after = z.string().regex(/^[A-Za-z0-9:._-]{1,200}$/).parse(Buffer.from(q.cursor, 'base64url').toString())
      } catch {
        throw new ValidationError({ cursor: 'Invalid cursor.' })
      }
      where.push(`id > $${params.push(after)}`)
    }
    const { rows } = await deps.pool.query<ActorListRow>(
      `select id, kind, account_id, status, version, stuck_reason, created_at, updated_at from actor
        ${where.length ? `where ${where.join(' and ')}` : ''} order by id limit $1`,
      params,
    )
    const page = rows.slice(0, q.limit)
    const last = page.at(-1)
    ok(ctx, {
      actors: page.map(actorSummary),
      nextCursor: rows.length > q.limit && last ? Buffer.from(last.id).toString('base64url') : null,
    })
  })

  // Operators vouch for a launched token: swaps then need no acknowledgement for it.
  router.post('/tokens/:address/verified', rejectQuery, async (ctx) => {
    const address = z.string().regex(/^0x[0-9a-fA-F]{40}$/).safeParse((ctx.params as { address?: string }).address)
    if (!address.success) throw new NotFoundError('Token')
    const { verified } = parse(verifiedBody, ctx.request.body)
    // Journaled like whitelist changes: who vouched for which token, and when.
    const { rows } = await deps.pool.query<{ address: string; symbol: string; verified: boolean }>(
      `with upd as (update token set verified = $2 where address = $1 returning address, symbol, verified),
            audit as (insert into audit_log (account_id, subject_id, action, data, actor, after, effective_at)
                      select $3, address, case when $2 then 'token.verify' else 'token.unverify' end, '{}'::jsonb, $4::jsonb,
                             jsonb_build_object('verified', verified), now() from upd)
       select * from upd`,
      [address.data.toLowerCase(), verified, principalOf(ctx).accountId, JSON.stringify(auditActorOf(principalOf(ctx)))],
    )
    if (!rows[0]) throw new NotFoundError('Token')
    ok(ctx, rows[0])
  })

  // The audit trail of every account (policy, payout wallet, whitelist and token verification changes), newest first.
  router.get('/audit', async (ctx) => {
    const q = parse(auditQuery, ctx.query)
    ok(ctx, await listAudit(deps.pool, q))
  })

  router.get('/actors/counts', rejectQuery, async (ctx) => {
    const { rows } = await deps.pool.query<{ kind: string; status: string; count: string }>(
      'select kind, status, count(*) from actor group by kind, status order by kind, status',
    )
    ok(ctx, { counts: rows.map((r) => ({ kind: r.kind, status: r.status, count: Number(r.count) })) })
  })

  router.get('/actors/:id', rejectQuery, async (ctx) => {
    const parsedId = z.string().max(200).safeParse((ctx.params as { id: string }).id)
    if (!parsedId.success) throw new NotFoundError('Actor')
    const id = parsedId.data
    const { rows } = await deps.pool.query('select * from actor where id = $1', [id])
    const actor = rows[0]
    if (!actor) throw new NotFoundError('Actor')
    const [timers, effects, journal, dead] = await Promise.all([
      deps.pool.query('select timer_key, generation, due_at, event from actor_timer where actor_id = $1 order by due_at', [id]),
      deps.pool.query(
        `select id, kind, params, status, external_ref, result, attempts, last_error, next_attempt_at, created_at, updated_at
           from effect where actor_id = $1 order by created_at desc limit 100`,
        [id],
      ),
      deps.pool.query(
        'select seq, event, state_value, at from actor_journal where actor_id = $1 order by seq desc limit 100',
        [id],
      ),
      deps.pool.query('select seq, event, error, dead_at from actor_inbox where actor_id = $1 and dead_at is not null order by seq desc limit 100', [id]),
    ])
    ok(ctx, {
      ...actorSummary(actor),
      machineVersion: actor.machine_version,
      stateValue: actor.state_value,
      snapshot: actor.snapshot,
      liveTimers: actor.timers,
      timers: timers.rows.map((t) => ({ key: t.timer_key, generation: Number(t.generation), dueAt: iso(t.due_at), event: t.event })),
      effects: effects.rows.map((e) => ({
        id: e.id, kind: e.kind, params: e.params, status: e.status, externalRef: e.external_ref, result: e.result,
        attempts: e.attempts, lastError: e.last_error, nextAttemptAt: iso(e.next_attempt_at), createdAt: iso(e.created_at), updatedAt: iso(e.updated_at),
      })),
      journal: journal.rows.map((j) => ({ seq: Number(j.seq), event: j.event, stateValue: j.state_value, at: iso(j.at) })),
      deadLetters: dead.rows.map((d) => ({ seq: Number(d.seq), event: d.event, error: d.error, deadAt: iso(d.dead_at) })),
    })
  })
  return router
}

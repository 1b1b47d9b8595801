import { Router } from '@koa/router'
import type { Context } from 'koa'
import { z } from 'zod'
import type { AppDeps } from '../appDeps.ts'
import { ok } from '../respond.ts'
import { limitQuery, parse, rejectQuery, uuidParam } from '../validate.ts'
import { principalOf } from '../middleware/auth.ts'
import { streamActorEvents } from '../actorEvents.ts'
import { NotFoundError, ValidationError } from '../../domain/errors.ts'
import { auditActorOf } from '../../domain/agents/auditTrail.ts'
import type { OpsOperator } from '../../domain/ops/ports.ts'
import { buildTimeline } from '../opsTimeline.ts'

/** Every console action names why: the reason goes to the audit trail with the operator. */
export const reasonBody = z.strictObject({ reason: z.string().trim().min(3).max(500) })
export const deadLettersQuery = z.strictObject({ limit: limitQuery })
/** A page of a timeline: up to `limit` journal entries (1 to 100, default 100) and what happened in their span; `cursor` the answer's `nextCursor`. */
export const timelineQuery = z.strictObject({
  limit: z.string().regex(/^[0-9]{1,3}$/, 'An integer from 1 to 100.').transform(Number)
    .pipe(z.number().int().min(1, 'An integer from 1 to 100.').max(100, 'An integer from 1 to 100.')).default(100),
  cursor: z.string().max(200).optional(),
})

/** A page of an agent's operations: `limit` (1 to 100, default 20), `cursor` the answer's `nextCursor`. */
export const operationsQuery = z.strictObject({ limit: limitQuery, cursor: z.string().max(300).optional() })
const operationsCursor = z.tuple([z.string().regex(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d{1,6})?[+-]\d\d(:\d\d)?$/), z.string().regex(/^[A-Za-z0-9:._-]{1,200}$/)])

/** An operations cursor is the last row's creation and id, as JSON in base64url. */
function operationsBefore(cursor: string | undefined): { createdAt: string; id: string } | undefined {
  if (cursor === undefined) return undefined
  try {
    const [createdAt, id] = operationsCursor.parse(JSON.parse(Buffer.from(cursor, 'base64url').toString()))
    return { createdAt, id }
  } catch {
    throw new ValidationError({ cursor: 'Invalid cursor.' })
  }
}

/** A timeline cursor (opened at the edge) is the journal seq its page ends before. */
function timelineBefore(cursor: string | undefined): number | undefined {
  if (cursor === undefined) return undefined
  if (!/^[1-9][0-9]{0,15}$/.test(cursor)) throw new ValidationError({ cursor: 'Invalid cursor.' })
  return Number(cursor)
}

export const actorIdParam = (ctx: Context): string => {
  const parsed = z.string().regex(/^[A-Za-z0-9:._-]{1,200}$/).safeParse((ctx.params as { id?: string }).id)
  if (!parsed.success) throw new NotFoundError('Actor')
  return parsed.data
}
const uuidOf = (ctx: Context, what: string): string => {
  const id = (ctx.params as { id?: string }).id
  if (!uuidParam.safeParse(id).success) throw new NotFoundError(what)
  return id!
}
const operatorOf = (ctx: Context): OpsOperator => {
  const p = principalOf(ctx)
  return { accountId: p.accountId, via: p.via, keyId: p.keyId ?? null, address: p.address ?? null }
}

/**
 * The operator console's API (mounted under /ops by `opsRoutes`, operators only): the overview,
 * one actor's timeline and live events, one agent's card, dead letters, and the audited
 * actions. None of them moves funds: pausing tightens a policy, cancelling stops a run. Each
 * parses, calls one ops use case of `core` (src/domain/ops/, wired in src/app/opsUseCases.ts), answers.
 */
export function opsConsoleRoutes({ core }: AppDeps): Router {
  const router = new Router()

  router.get('/overview', rejectQuery, async (ctx) => {
    ok(ctx, await core.getOpsOverview())
  })

  // Newest first by pages: `timeline` is one page in time order, `nextCursor` asks for the older one.
  router.get('/actors/:id/timeline', async (ctx) => {
    const actorId = actorIdParam(ctx)
    const q = parse(timelineQuery, ctx.query)
    const { actor, relations, page, maxAttemptsOf } = await core.getActorTimeline({ actorId, before: timelineBefore(q.cursor), limit: q.limit })
    ok(ctx, { actor, ...relations, timeline: buildTimeline(page, maxAttemptsOf), nextCursor: page.nextBefore === null ? null : String(page.nextBefore) })
  })

  // The console follows one actor as its state commits: the same stream as GET /launch/:id/events.
  router.get('/actors/:id/events', rejectQuery, async (ctx) => {
    const actorId = actorIdParam(ctx)
    const { kind, read, isFinal } = await core.opsActorStream({ actorId })
    await streamActorEvents(ctx, core.actorEvents, { actorId, kind, read, isFinal })
  })

  router.get('/agents/:id', rejectQuery, async (ctx) => {
    ok(ctx, await core.getOpsAgent({ agentId: uuidOf(ctx, 'Agent') }))
  })

  // The agent's swaps, transfers, fee claims and launches, newest first, each with what started it.
  router.get('/agents/:id/operations', async (ctx) => {
    const agentId = uuidOf(ctx, 'Agent')
    const q = parse(operationsQuery, ctx.query)
    const { operations, next } = await core.listAgentOperations({ agentId, limit: q.limit, before: operationsBefore(q.cursor) })
    ok(ctx, { operations, nextCursor: next ? Buffer.from(JSON.stringify([next.createdAt, next.id])).toString('base64url') : null })
  })

  router.get('/dead-letters', async (ctx) => {
    const q = parse(deadLettersQuery, ctx.query)
    ok(ctx, { deadLetters: await core.listDeadLetters({ limit: q.limit }) })
  })

  // An agent's portfolio value over time: valued on chain at blocks from its first transaction to now.
  router.get('/agents/:id/value-history', rejectQuery, async (ctx) => {
    ok(ctx, { points: await core.getAgentValueHistory({ agentId: uuidOf(ctx, 'Agent') }) })
  })
  mountActions(router, core)
  return router
}

/** The console's actions: each needs a reason and is audited with the operator. */
function mountActions(router: Router, core: AppDeps['core']): void {
  for (const action of ['retry', 'discard'] as const) {
    router.post(`/dead-letters/:seq/${action}`, rejectQuery, async (ctx) => {
      const seq = z.coerce.number().int().positive().max(Number.MAX_SAFE_INTEGER).safeParse((ctx.params as { seq?: string }).seq)
      if (!seq.success) throw new NotFoundError('Dead letter')
      const { reason } = parse(reasonBody, ctx.request.body)
      const resolution = action === 'retry' ? 'retried' : 'discarded'
      ok(ctx, await core.resolveDeadLetter({ seq: seq.data, resolution, operator: operatorOf(ctx), reason }))
    })
  }

  router.post('/actors/:id/unstick', rejectQuery, async (ctx) => {
    const actorId = actorIdParam(ctx)
    const { reason } = parse(reasonBody, ctx.request.body)
    ok(ctx, await core.unstickActor({ actorId, operator: operatorOf(ctx), reason }))
  })

  // The kill switch: the agent's policy `paused`, through the same use case as PATCH /agents/:id (tightening: at once).
  router.post('/agents/:id/pause', rejectQuery, async (ctx) => {
    const agentId = uuidOf(ctx, 'Agent')
    const { reason } = parse(reasonBody, ctx.request.body)
    ok(ctx, await core.pauseAgent({ agentId, actor: auditActorOf(principalOf(ctx)), operator: operatorOf(ctx), reason }))
  })

  // Cancels a run through the stop use case: nothing new starts, what is in flight completes.
  router.post('/runs/:id/cancel', rejectQuery, async (ctx) => {
    const runId = uuidOf(ctx, 'Run')
    const { reason } = parse(reasonBody, ctx.request.body)
    ok(ctx, await core.cancelRun({ runId, operator: operatorOf(ctx), reason }))
  })
}

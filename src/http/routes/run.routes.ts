import { Router } from '@koa/router'
import type { Context, Next } from 'koa'
import { randomUUID } from 'node:crypto'
import type { AppDeps } from '../appDeps.ts'
import { ok } from '../respond.ts'
import { noBody, parse, uuidParam, rejectQuery } from '../validate.ts'
import { principalOf, requireScope } from '../middleware/auth.ts'
import { idempotency, type IdempotencyState } from '../middleware/idempotency.ts'
import { NotFoundError } from '../../domain/errors.ts'
import { listRunsQuerySchema, startRunRequestSchema } from '../../domain/runs/run.schema.ts'
import { streamActorEvents } from '../actorEvents.ts'

const RUN_FINAL = new Set(['completed', 'stopped', 'failed', 'budget_exhausted'])

const param = (ctx: Context, name: string, what: string): string => {
  const id = (ctx.params as Record<string, string | undefined>)[name]
  if (!uuidParam.safeParse(id).success) throw new NotFoundError(what)
  return id as string
}

/**
 * Autonomous runs: `POST /agents/:id/runs` starts one (202 with the run; `Idempotency-Key`
 * honoured: the key's resource id is the run id), `GET /agents/:id/runs` pages an agent's runs,
 * `GET /runs/:id` reads one, `POST /runs/:id/stop` stops one and answers it once it ended.
 */
export function runRoutes({ core }: AppDeps): Router {
  const router = new Router()
  const account = (ctx: Context) => principalOf(ctx).accountId

  router.post(
    '/agents/:id/runs',
    rejectQuery,
    requireScope('trade'),
    (ctx: Context, next: Next) => idempotency({ keys: core.idempotencyKeys, route: `agents/${param(ctx, 'id', 'Agent')}/runs`, required: false })(ctx, next),
    async (ctx: Context) => {
      const runId = (ctx.state.idempotency as IdempotencyState | undefined)?.resourceId ?? randomUUID()
      const request = parse(startRunRequestSchema, ctx.request.body ?? {})
      ok(ctx, await core.startRun({ accountId: account(ctx), agentId: param(ctx, 'id', 'Agent'), request, runId }), 202)
    },
  )
  router.get('/agents/:id/runs', requireScope('read'), async (ctx) => {
    const agentId = param(ctx, 'id', 'Agent')
    ok(ctx, await core.listRuns({ accountId: account(ctx), agentId, query: parse(listRunsQuerySchema, ctx.query) }))
  })
  router.get('/runs/:id', rejectQuery, requireScope('read'), async (ctx) => {
    ok(ctx, await core.getRun({ accountId: account(ctx), runId: param(ctx, 'id', 'Run') }))
  })
  // Server-Sent Events: each status as it commits, until the run ends (resumable with Last-Event-ID).
  router.get('/runs/:id/events', rejectQuery, requireScope('read'), async (ctx) => {
    const runId = param(ctx, 'id', 'Run')
    const read = () => core.getRun({ accountId: account(ctx), runId })
    await streamActorEvents(ctx, core.actorEvents, { actorId: runId, kind: 'run', read, isFinal: (s) => RUN_FINAL.has(s) })
  })
  router.post('/runs/:id/stop', rejectQuery, requireScope('trade'), async (ctx) => {
    const runId = param(ctx, 'id', 'Run')
    parse(noBody, ctx.request.body)
    ok(ctx, await core.stopRun({ accountId: account(ctx), runId }))
  })
  return router
}

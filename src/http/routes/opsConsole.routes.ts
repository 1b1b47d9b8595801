import { Router } from '@koa/router'
import type { Context } from 'koa'
import { z } from 'zod'
import type { AppDeps } from '../appDeps.ts'
import { ok } from '../respond.ts'
import { limitQuery, parse, rejectQuery, uuidParam } from '../validate.ts'
import { principalOf } from '../middleware/auth.ts'
import { streamActorEvents } from '../actorEvents.ts'
import { InvalidStateError, NotFoundError } from '../../domain/errors.ts'
import { auditActorOf } from '../../domain/agents/auditTrail.ts'
import { listAudit } from '../../db/auditTrail.store.ts'
import { opsOverviewCounts } from '../../db/opsOverview.store.ts'
import { actorDetail, actorRelations, actorSummary, actorsOfAgent, findActorRow, firstAgentTxBlock, listOpenDeadLetters } from '../../db/opsActors.store.ts'
import { actorOwner, clearStuck, resolveDeadLetter, writeOpsAudit, type OpsOperator } from '../../db/opsActions.store.ts'
import { spentTodayUsd } from '../../db/walletOp.store.ts'
import { buildTimeline } from '../opsTimeline.ts'
import { agentFlags } from '../../domain/agents/agentFlags.ts'

/** Every console action names why: the reason goes to the audit trail with the operator. */
export const reasonBody = z.strictObject({ reason: z.string().trim().min(3).max(500) })
export const deadLettersQuery = z.strictObject({ limit: limitQuery })

/** How long the overview waits for the chain head before answering without it. */
const CHAIN_HEAD_TIMEOUT_MS = 500

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

async function chainHead(deps: AppDeps): Promise<number | null> {
  if (!deps.chain) return null
  const timeout = new Promise<null>((r) => setTimeout(() => r(null), CHAIN_HEAD_TIMEOUT_MS).unref())
  const head = deps.chain.publicClient.getBlockNumber().then(Number, () => null)
  return Promise.race([head, timeout])
}

/**
 * The operator console's API (mounted under /ops by `opsRoutes`, operators only): the overview,
 * one actor's timeline and live events, one agent's card, dead letters, and the audited
 * actions. None of them moves funds: pausing tightens a policy, cancelling stops a run.
 */
export function opsConsoleRoutes(deps: AppDeps): Router {
  const router = new Router()

  router.get('/overview', rejectQuery, async (ctx) => {
    const [counts, head] = await Promise.all([opsOverviewCounts(deps.pool), chainHead(deps)])
    const lag = head !== null && counts.indexedBlock !== null ? Math.max(0, head - counts.indexedBlock) : null
    ok(ctx, { ...counts, chain: { head, indexedBlock: counts.indexedBlock, lagBlocks: lag }, at: new Date().toISOString() })
  })

  router.get('/actors/:id/timeline', rejectQuery, async (ctx) => {
    const actor = await findActorRow(deps.pool, actorIdParam(ctx))
    if (!actor) throw new NotFoundError('Actor')
    const [detail, relations] = await Promise.all([actorDetail(deps.pool, actor.id), actorRelations(deps.pool, actor.id, actor.parent_id)])
    ok(ctx, {
      actor: { ...actorSummary(actor), stateValue: actor.state_value, snapshot: actor.snapshot },
      ...relations,
      deadLetters: detail.deadLetters,
      timeline: buildTimeline(detail, relations.children),
    })
  })

  // The console follows one actor as its state commits: the same stream as GET /launch/:id/events.
  router.get('/actors/:id/events', rejectQuery, async (ctx) => {
    const id = actorIdParam(ctx)
    const row = await findActorRow(deps.pool, id)
    const kind = row && deps.runtime.kinds.get(row.kind)
    if (!row || !kind) throw new NotFoundError('Actor')
    const read = async () => {
      const now = await findActorRow(deps.pool, id)
      if (!now) throw new NotFoundError('Actor')
      return actorSummary(now)
    }
    const isFinal = (s: string) => (kind.machine.root.states[s] as { type?: string } | undefined)?.type === 'final'
    await streamActorEvents(ctx, deps, { actorId: id, kind: row.kind, read, isFinal })
  })

  router.get('/agents/:id', rejectQuery, async (ctx) => {
    const agentId = uuidOf(ctx, 'Agent')
    const owner = await actorOwner(deps.pool, agentId, 'agent')
    if (!owner) throw new NotFoundError('Agent')
    const accountId = owner.accountId
    const [agent, spent, credits, runs, chatTurns, automations, audit, portfolio] = await Promise.all([
      deps.core.getAgent({ accountId, agentId }),
      spentTodayUsd(deps.pool, agentId),
      deps.credits.balance(accountId),
      actorsOfAgent(deps.pool, 'run', agentId),
      actorsOfAgent(deps.pool, 'chatturn', agentId),
      // The slot for automations: empty until that actor kind exists.
      actorsOfAgent(deps.pool, 'automation', agentId),
      listAudit(deps.pool, { subjectId: agentId, limit: 20 }),
      deps.wallet ? deps.core.getPortfolio({ accountId, agentId }).catch(() => null) : Promise.resolve(null),
    ])
    ok(ctx, {
      agent, accountId, spentTodayUsd: spent, credits, portfolio, runs, chatTurns, automations, audit: audit.entries,
      flags: agentFlags({ portfolio, credits }),
    })
  })

  router.get('/dead-letters', async (ctx) => {
    const q = parse(deadLettersQuery, ctx.query)
    ok(ctx, { deadLetters: await listOpenDeadLetters(deps.pool, q.limit) })
  })

  mountValueHistory(router, deps)
  mountActions(router, deps)
  return router
}

/** Points of an agent's value chart. */
const HISTORY_POINTS = 16

/** At most `n` distinct blocks evenly spaced from `from` to `to`, both included. */
export function sampleBlocks(from: bigint, to: bigint, n: number): bigint[] {
  if (to <= from) return [to]
  const span = to - from
  const steps = BigInt(Math.max(1, n - 1))
  return [...new Set(Array.from({ length: n }, (_, i) => from + (span * BigInt(i)) / steps))].filter((b) => b <= to)
}

/** An agent's portfolio value over time: valued on chain at blocks from its first transaction to now. */
function mountValueHistory(router: Router, deps: AppDeps): void {
  router.get('/agents/:id/value-history', rejectQuery, async (ctx) => {
    const agentId = uuidOf(ctx, 'Agent')
    const owner = await actorOwner(deps.pool, agentId, 'agent')
    if (!owner) throw new NotFoundError('Agent')
    const client = deps.wallet?.chain.publicClient
    if (!client) return ok(ctx, { points: [] })
    const head = await client.getBlockNumber({ cacheTime: 0 })
    const first = await firstAgentTxBlock(deps.pool, agentId)
    const from = first === null ? head : first > 0n ? first - 1n : 0n
    const blocks = await Promise.all(
      sampleBlocks(from, head, HISTORY_POINTS).map(async (number) => ({
        number,
        at: new Date(Number((await client.getBlock({ blockNumber: number })).timestamp) * 1000).toISOString(),
      })),
    )
    ok(ctx, { points: await deps.core.getPortfolioHistory({ accountId: owner.accountId, agentId, blocks }) })
  })
}

/** The console's actions: each needs a reason and is audited with the operator. */
function mountActions(router: Router, deps: AppDeps): void {
  for (const action of ['retry', 'discard'] as const) {
    router.post(`/dead-letters/:seq/${action}`, rejectQuery, async (ctx) => {
      const seq = z.coerce.number().int().positive().max(Number.MAX_SAFE_INTEGER).safeParse((ctx.params as { seq?: string }).seq)
      if (!seq.success) throw new NotFoundError('Dead letter')
      const { reason } = parse(reasonBody, ctx.request.body)
      const resolution = action === 'retry' ? 'retried' : 'discarded'
      const done = await resolveDeadLetter(deps.pool, { seq: seq.data, resolution, operator: operatorOf(ctx), reason })
      if (!done) throw new NotFoundError('Dead letter')
      // The event was enqueued again in that transaction; this processes it now (the dedupe key inserts nothing twice).
      if (done.dedupeKey) await deps.runtime.enqueue(done.actorId, done.accountId, done.event as { type: string }, done.dedupeKey)
      ok(ctx, { seq: done.seq, actorId: done.actorId, resolution: done.resolution })
    })
  }

  router.post('/actors/:id/unstick', rejectQuery, async (ctx) => {
    const actorId = actorIdParam(ctx)
    const { reason } = parse(reasonBody, ctx.request.body)
    const done = await clearStuck(deps.pool, { actorId, operator: operatorOf(ctx), reason })
    if (!done) {
      if (!(await actorOwner(deps.pool, actorId))) throw new NotFoundError('Actor')
      throw new InvalidStateError({ event: 'unstick', state: 'not stuck' })
    }
    ok(ctx, { actorId, stuck: false, stuckReason: done.stuckReason })
  })

  // The kill switch: the agent's policy `paused`, through the same use case as PATCH /agents/:id (tightening: at once).
  router.post('/agents/:id/pause', rejectQuery, async (ctx) => {
    const agentId = uuidOf(ctx, 'Agent')
    const { reason } = parse(reasonBody, ctx.request.body)
    const owner = await actorOwner(deps.pool, agentId, 'agent')
    if (!owner) throw new NotFoundError('Agent')
    const before = await deps.core.getAgent({ accountId: owner.accountId, agentId })
    const agent = await deps.core.updateAgent({ accountId: owner.accountId, agentId, actor: auditActorOf(principalOf(ctx)), policy: { paused: true } })
    await writeOpsAudit(deps.pool, {
      accountId: owner.accountId, subjectId: agentId, action: 'ops.agent.pause', operator: operatorOf(ctx), reason,
      before: { paused: before.policy.paused }, after: { paused: agent.policy.paused },
    })
    ok(ctx, agent)
  })

  // Cancels a run through the stop use case: nothing new starts, what is in flight completes.
  router.post('/runs/:id/cancel', rejectQuery, async (ctx) => {
    const runId = uuidOf(ctx, 'Run')
    const { reason } = parse(reasonBody, ctx.request.body)
    const owner = await actorOwner(deps.pool, runId, 'run')
    if (!owner) throw new NotFoundError('Run')
    const run = await deps.core.stopRun({ accountId: owner.accountId, runId })
    await writeOpsAudit(deps.pool, {
      accountId: owner.accountId, subjectId: runId, action: 'ops.run.cancel', operator: operatorOf(ctx), reason,
      before: { status: owner.status }, after: { status: run.status },
    })
    ok(ctx, run)
  })
}

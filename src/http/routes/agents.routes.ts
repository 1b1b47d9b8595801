import { Router } from '@koa/router'
import type { Context } from 'koa'
import type { AppDeps } from '../appDeps.ts'
import { ok } from '../respond.ts'
import { decodeCursor, encodeCursor, noBody, pagingQuery, parse, uuidParam, rejectQuery } from '../validate.ts'
import { principalOf, requireScope } from '../middleware/auth.ts'
import { whitelistAddBody, whitelistDeleteBody } from '../../domain/agents/agent.schema.ts'
import { ForbiddenError, NotFoundError } from '../../domain/errors.ts'
import { auditActorOf } from '../../domain/agents/auditTrail.ts'
import { parseAgentBody } from '../../domain/agents/parseAgentBody.ts'
import { ModeImmutableError } from '../../domain/paper/errors.ts'
import { idempotency, idempotentCreation, type IdempotencyState } from '../middleware/idempotency.ts'
import { cloneAgentBody } from '../../domain/paper/paper.schema.ts'
import { ownerPolicySchema } from '../../domain/policies/ownerPolicy.schema.ts'

/** The agent id from the path; a value that is not a uuid cannot name an agent (404). */
function agentId(ctx: Context): string {
  const id = (ctx.params as Record<string, string | undefined>).id
  if (!uuidParam.safeParse(id).success) throw new NotFoundError('Agent')
  return id as string
}

/** Agents (snake_case bodies, camelCase responses), their lifecycle commands and their transfer whitelists. */
export function agentRoutes(deps: AppDeps): Router {
  const { core } = deps
  // Built once by core from the catalogs and the configured least run interval (the agent tools parse with the same).
  const schemas = core.agentSchemas
  const router = new Router({ prefix: '/agents' })
  const account = (ctx: Context) => principalOf(ctx).accountId

  router.get('/', requireScope('read'), async (ctx) => {
    const q = parse(pagingQuery, ctx.query)
    const { agents, last } = await core.listAgents({ accountId: account(ctx), limit: q.limit, after: decodeCursor(q.cursor) })
    ok(ctx, { agents, nextCursor: last ? encodeCursor(last.createdAt, last.id) : null })
  })
  router.post('/', rejectQuery, requireScope('trade'), idempotentCreation(core.idempotencyKeys), async (ctx) => {
    const body = await parseAgentBody(core, account(ctx), schemas.create, ctx.request.body)
    ok(ctx, await core.createAgent({ ...body, accountId: account(ctx) }), 201)
  })
  router.get('/:id', rejectQuery, requireScope('read'), async (ctx) => {
    ok(ctx, await core.getAgent({ accountId: account(ctx), agentId: agentId(ctx) }))
  })
  const update = async (ctx: Context) => {
    const id = agentId(ctx)
    const raw: unknown = ctx.request.body
    // Guardrails are changed by an admin key or a dashboard session only, never by a trade key
    // (which models and tool clients act with); refused before anything is read or written.
    const guarded = raw !== null && typeof raw === 'object' && ('policy' in raw || 'payout_wallet' in raw)
    if (guarded && !principalOf(ctx).scopes.includes('admin')) {
      throw new ForbiddenError('Changing the policy or the payout wallet needs the "admin" scope (or a dashboard session).')
    }
    // An agent's mode is fixed at creation (a paper agent is cloned, never switched to live).
    if (raw !== null && typeof raw === 'object' && 'mode' in raw) throw new ModeImmutableError()
    const body = await parseAgentBody(core, account(ctx), schemas.update, raw ?? {})
    ok(ctx, await core.updateAgent({ ...body, accountId: account(ctx), agentId: id, actor: auditActorOf(principalOf(ctx)) }))
  }
  // The contract lists both; the reference client updates with POST.
  router.post('/:id', rejectQuery, requireScope('trade'), update)
  router.patch('/:id', rejectQuery, requireScope('trade'), update)
  router.delete('/:id', rejectQuery, requireScope('trade'), async (ctx) => {
    const id = agentId(ctx)
    parse(noBody, ctx.request.body)
    ok(ctx, await core.deleteAgent({ accountId: account(ctx), agentId: id }))
  })
  for (const [path, command] of [['start', core.startAgent], ['stop', core.stopAgent]] as const) {
    router.post(`/:id/${path}`, rejectQuery, requireScope('trade'), async (ctx) => {
      const id = agentId(ctx)
      parse(noBody, ctx.request.body)
      ok(ctx, await command({ accountId: account(ctx), agentId: id }))
    })
  }

  // A new live agent from this one's settings; with an Idempotency-Key, a retry answers the same clone.
  router.post('/:id/clone', rejectQuery, requireScope('trade'), idempotency({ keys: core.idempotencyKeys, route: 'agents/clone', required: false }), async (ctx: Context) => {
    const id = agentId(ctx)
    const body = parse(cloneAgentBody, ctx.request.body ?? {})
    const cloneId = (ctx.state.idempotency as IdempotencyState | undefined)?.resourceId
    ok(ctx, await core.cloneAgent({ accountId: account(ctx), agentId: id, name: body.name, id: cloneId }), 201)
  })

  router.get('/:id/whitelist', rejectQuery, requireScope('read'), async (ctx) => {
    ok(ctx, { whitelist: await core.listWhitelist({ accountId: account(ctx), agentId: agentId(ctx) }) })
  })
  router.post('/:id/whitelist', rejectQuery, requireScope('admin'), idempotentCreation(core.idempotencyKeys), async (ctx) => {
    const id = agentId(ctx)
    const body = parse(whitelistAddBody, ctx.request.body)
    ok(ctx, await core.addToWhitelist({ ...body, accountId: account(ctx), agentId: id, actor: auditActorOf(principalOf(ctx)) }), 201)
  })
  router.delete('/:id/whitelist', requireScope('admin'), async (ctx) => {
    const id = agentId(ctx)
    // The address may come in the body or as ?address=.
    const source = ctx.request.body && Object.keys(ctx.request.body).length > 0 ? ctx.request.body : ctx.query
    const { address } = parse(whitelistDeleteBody, source)
    const removed = await core.removeFromWhitelist({ accountId: account(ctx), agentId: id, address, actor: auditActorOf(principalOf(ctx)) })
    ok(ctx, { ...removed, deleted: true })
  })
  // The agent's own policy, evaluated after the account's (docs/api.md, "Policies").
  router.get('/:id/policy', rejectQuery, requireScope('admin'), async (ctx) => {
    ok(ctx, await core.getOwnerPolicy({ scope: 'agent', accountId: account(ctx), agentId: agentId(ctx) }))
  })
  router.put('/:id/policy', rejectQuery, requireScope('admin'), async (ctx) => {
    const id = agentId(ctx)
    const policy = parse(ownerPolicySchema, ctx.request.body)
    ok(ctx, await core.putOwnerPolicy({ target: { scope: 'agent', accountId: account(ctx), agentId: id }, actor: auditActorOf(principalOf(ctx)), policy }))
  })
  router.get('/:id/audit', requireScope('read'), async (ctx) => {
    const id = agentId(ctx)
    const q = parse(pagingQuery, ctx.query)
    ok(ctx, await core.listAgentAudit({ accountId: account(ctx), agentId: id, limit: q.limit, cursor: q.cursor }))
  })
  return router
}

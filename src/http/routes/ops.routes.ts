import { Router } from '@koa/router'
import { z } from 'zod'
import type { AppDeps } from '../appDeps.ts'
import { ok } from '../respond.ts'
import { limitQuery, parse, rejectQuery } from '../validate.ts'
import { principalOf, requireOperator } from '../middleware/auth.ts'
import { NotFoundError, ValidationError } from '../../domain/errors.ts'
import { auditActorOf } from '../../domain/agents/auditTrail.ts'
import { actorIdParam, opsConsoleRoutes } from './opsConsole.routes.ts'

export const listQuery = z.strictObject({
  kind: z.string().regex(/^[a-z-]{1,32}$/).optional(),
  /** A state name, or `stuck`. */
  status: z.string().regex(/^[a-z_]{1,32}$/).optional(),
  /** `true`: "failed only", each kind's failure states (ActorKind.failureStates). */
  failed: z.enum(['true', 'false']).optional(),
  accountId: z.uuid().optional(),
  agentId: z.uuid().optional(),
  /** Created at or after / before (ISO 8601). */
  since: z.iso.datetime({ offset: true }).optional(),
  until: z.iso.datetime({ offset: true }).optional(),
  /** An actor id, a transaction hash or an address. */
  q: z.string().trim().min(1).max(200).optional(),
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

/** A cursor is the last id of the page before, base64url. */
function decodeCursor(cursor: string | undefined): string | undefined {
  if (cursor === undefined) return undefined
  try {
    return z.string().regex(/^[A-Za-z0-9:._-]{1,200}$/).parse(Buffer.from(cursor, 'base64url').toString())
  } catch {
    throw new ValidationError({ cursor: 'Invalid cursor.' })
  }
}

/**
 * Operator views of every actor across accounts (the list with its filters, counts, one actor in
 * full), the audit trail, token verification; the console's routes (opsConsole.routes.ts) mount
 * under the same prefix. Operators only.
 */
export function opsRoutes(deps: AppDeps): Router {
  const { core } = deps
  const router = new Router({ prefix: '/ops' })
  router.use(requireOperator())

  router.get('/actors', async (ctx) => {
    const { cursor, failed, ...q } = parse(listQuery, ctx.query)
    const rows = await core.listActors({ ...q, failed: failed === 'true', after: decodeCursor(cursor) })
    const page = rows.slice(0, q.limit)
    const last = page.at(-1)
    ok(ctx, { actors: page, nextCursor: rows.length > q.limit && last ? Buffer.from(last.id).toString('base64url') : null })
  })

  // Operators vouch for a launched token: swaps then need no acknowledgement for it.
  router.post('/tokens/:address/verified', rejectQuery, async (ctx) => {
    const address = z.string().regex(/^0x[0-9a-fA-F]{40}$/).safeParse((ctx.params as { address?: string }).address)
    if (!address.success) throw new NotFoundError('Token')
    const { verified } = parse(verifiedBody, ctx.request.body)
    ok(ctx, await core.setTokenVerified({ address: address.data, verified, accountId: principalOf(ctx).accountId, actor: auditActorOf(principalOf(ctx)) }))
  })

  // The audit trail of every account (policy, payout wallet, whitelist and token verification changes), newest first.
  router.get('/audit', async (ctx) => {
    const q = parse(auditQuery, ctx.query)
    ok(ctx, await core.listAudit(q))
  })

  // The service's node processes (live ones first, and those seen in the last hour), with the shards and roles each holds.
  router.get('/nodes', rejectQuery, async (ctx) => {
    ok(ctx, { nodes: await core.listNodes() })
  })

  router.get('/actors/counts', rejectQuery, async (ctx) => {
    ok(ctx, { counts: await core.countActors() })
  })

  router.get('/actors/:id', rejectQuery, async (ctx) => {
    ok(ctx, await core.getOpsActor({ actorId: actorIdParam(ctx) }))
  })
  router.use(opsConsoleRoutes(deps).routes())
  return router
}

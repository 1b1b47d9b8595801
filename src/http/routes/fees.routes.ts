import { randomUUID } from 'node:crypto'
import { Router } from '@koa/router'
import type { Context } from 'koa'
import { z } from 'zod'
import type { AppDeps } from '../appDeps.ts'
import { ok } from '../respond.ts'
import { evmAddress, parse, rejectQuery } from '../validate.ts'
import { principalOf, requireScope } from '../middleware/auth.ts'
import { idempotency, type IdempotencyState } from '../middleware/idempotency.ts'
import { ChainNotConfiguredError, NotFoundError, OperationFailedError, ServiceError, IdempotencyKeyReusedError } from '../../domain/errors.ts'
import { NothingToClaimError, createFeesService } from '../../domain/fees/fees.service.ts'
import { claimParamsSchema } from '../../chain/claimPlanner.ts'
import type { WalletOpInput } from '../../actors/walletOp.machine.ts'

export const earningsQuery = z.strictObject({ agentId: z.uuid('Must be an agent id.') })
export const claimBody = z.strictObject({
  agentId: z.uuid('Must be an agent id.'),
  tokenAddress: evmAddress.optional(),
})

/** A claim that ended `failed`, as the error the caller sees. */
function claimFailed(error: { code: string; message: string } | null): ServiceError {
  const e = error ?? { code: 'claim_failed', message: 'The claim failed.' }
  if (/nothing to claim/i.test(e.message)) return new NothingToClaimError()
  return new OperationFailedError(e)
}

/**
 * Creator fees: what an agent's tokens earned (read on chain), claims to its payout wallet
 * through a `claim` wallet operation, and platform fee totals.
 */
export function feeRoutes(deps: AppDeps): Router {
  const router = new Router({ prefix: '/fees' })
  const fees = createFeesService({ pool: deps.pool, chain: deps.chain, agents: deps.agentsRepository })

  router.get('/earnings', requireScope('read'), async (ctx) => {
    const { agentId } = parse(earningsQuery, ctx.query)
    ok(ctx, await fees.earnings(principalOf(ctx).accountId, agentId))
  })

  router.post(
    '/claim',
    requireScope('trade'),
    rejectQuery,
    idempotency({ pool: deps.pool, route: 'fees/claim', required: false }),
    async (ctx: Context) => {
      const body = parse(claimBody, ctx.request.body ?? {})
      const wallet = deps.wallet
      if (!wallet) throw new ChainNotConfiguredError()
      const { accountId } = principalOf(ctx)
      const idem = ctx.state.idempotency as IdempotencyState | undefined
      const opId = idem?.resourceId ?? randomUUID()
      // A retry of a keyed claim finds its operation; planning again would see nothing left to claim.
      const existing = idem ? await deps.runtime.get(opId) : undefined
      if (existing && (existing.accountId !== accountId || existing.kind.kind !== 'walletop')) throw new NotFoundError('Operation')
      if (existing) {
        // Only the same request may be answered with it: same agent, and the same token when one was named.
        const ctx = existing.snapshot.context as WalletOpInput
        const tokens = (claimParamsSchema.safeParse(ctx.params).data?.claims ?? []).map((c) => c.tokenAddress.toLowerCase())
        const named = body.tokenAddress?.toLowerCase()
        if (ctx.agentId !== body.agentId || (named !== undefined && (tokens.length !== 1 || tokens[0] !== named))) {
          throw new IdempotencyKeyReusedError()
        }
      }
      const params = existing ? {} : { claims: (await fees.planClaim(accountId, body.agentId, body.tokenAddress)).claims }
      // A claim pays the agent's own payout wallet: it spends nothing, so it counts 0 toward the daily cap.
      // Exclusive: a second claim started beside this one would find the same fees and revert.
      const view = await wallet.run({ opId, accountId, agentId: body.agentId, kind: 'claim', params, usdValue: '0', exclusive: true })
      if (view.status === 'failed') throw claimFailed(view.error)

      const entry = await deps.runtime.get(opId)
      const planned = claimParamsSchema.safeParse((entry?.snapshot.context as WalletOpInput | undefined)?.params)
      const result = view as typeof view & { claims?: unknown; gasUsed?: string; blockNumber?: string }
      const claims = Array.isArray(result.claims)
        ? result.claims
        : (planned.data?.claims ?? []).map((c) => ({
            tokenAddress: c.tokenAddress,
            symbol: c.symbol,
            venue: c.venue,
            quote: c.quote,
            amount: c.expectedAmount,
            tokenAmount: c.expectedTokenAmount,
            to: c.to,
            txHash: null,
          }))
      const done = view.status === 'confirmed'
      ok(
        ctx,
        {
          id: opId,
          agentId: view.agentId,
          status: view.status,
          txHash: view.txHash,
          to: planned.data?.claims[0]?.to ?? null,
          claims,
          gasUsed: result.gasUsed ?? null,
          blockNumber: result.blockNumber ?? null,
        },
        done ? 200 : 202,
      )
    },
  )

  router.get('/stats', requireScope('read'), rejectQuery, async (ctx) => {
    ok(ctx, await fees.stats())
  })
  return router
}

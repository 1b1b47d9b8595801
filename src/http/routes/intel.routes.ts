import { Router } from '@koa/router'
import type { AppDeps } from '../appDeps.ts'
import { ok } from '../respond.ts'
import { parse } from '../validate.ts'
import { anomaliesQuery, candlesQuery, indicatorsQuery, macroQuery, topMoversQuery, yieldQuery } from '../../domain/intel/intel.schema.ts'

export { anomaliesQuery, candlesQuery, indicatorsQuery, macroQuery, topMoversQuery, yieldQuery } from '../../domain/intel/intel.schema.ts'

/**
 * Public market intelligence (no credentials), every figure from the chain indexer: a token's
 * candles, technical indicators, and the reference client's signals (top movers, anomalies,
 * yield, macro), snake_case query parameters as it sends them.
 */
export function intelRoutes({ core }: AppDeps): Router {
  const router = new Router()
  router.get('/tokens/:address/candles', async (ctx) => {
    ok(ctx, await core.getCandles({ ...parse(candlesQuery, ctx.query), address: (ctx.params as { address?: string }).address }))
  })
  router.get('/indicators', async (ctx) => {
    ok(ctx, await core.getIndicators(parse(indicatorsQuery, ctx.query)))
  })
  router.get('/signals/top-movers', async (ctx) => {
    ok(ctx, await core.getTopMovers(parse(topMoversQuery, ctx.query)))
  })
  router.get('/signals/anomalies', async (ctx) => {
    ok(ctx, await core.listAnomalies(parse(anomaliesQuery, ctx.query)))
  })
  router.get('/signals/yield', async (ctx) => {
    ok(ctx, await core.getYieldOpportunities(parse(yieldQuery, ctx.query)))
  })
  router.get('/signals/macro', async (ctx) => {
    ok(ctx, await core.getMacroSignals(parse(macroQuery, ctx.query)))
  })
  return router
}

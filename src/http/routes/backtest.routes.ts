import { Router } from '@koa/router'
import type { AppDeps } from '../appDeps.ts'
import { ok } from '../respond.ts'
import { parse, rejectQuery } from '../validate.ts'
import { requireScope } from '../middleware/auth.ts'
import { backtestSchema } from '../../domain/backtest/backtestPlan.ts'

/**
 * Backtests: `POST /backtests` replays an automation's creation body (no agent) over the
 * indexed candles of its token and answers its fills, result and the buy-and-hold beside it
 * (src/domain/backtest). Nothing is stored or sent; scope `read`.
 */
export function backtestRoutes({ core }: AppDeps): Router {
  const router = new Router()
  router.post('/backtests', rejectQuery, requireScope('read'), async (ctx) => {
    ok(ctx, await core.runBacktest(parse(backtestSchema, ctx.request.body)))
  })
  return router
}

import { Router } from '@koa/router'
import type { AppDeps } from '../appDeps.ts'
import { ok } from '../respond.ts'
import { BUILTIN_SKILLS, STRATEGY_PRESETS } from '../../domain/skills/builtinSkills.ts'
import { openApiDocument } from '../openapi.ts'
import { rejectQuery } from '../validate.ts'

/** Public platform data: health, model catalog, built-in skills and strategy presets. */
export function publicRoutes(deps: AppDeps): Router {
  const router = new Router()
  router.get('/health', rejectQuery, async (ctx) => {
    const report = await deps.core.health()
    ok(ctx, report, report.database.ok ? 200 : 503)
  })
  router.get('/models', rejectQuery, (ctx) => {
    ok(ctx, { models: deps.core.listModels() })
  })
  router.get('/skills', rejectQuery, (ctx) => {
    ok(ctx, {
      skills: BUILTIN_SKILLS.map(({ slug, name, description, alwaysOn, tools }) => ({ slug, name, description, alwaysOn, tools })),
      strategies: STRATEGY_PRESETS.map(({ slug, name, description, skills, goal, runIntervalSeconds, suggestedPolicy: p }) => ({
        slug, name, description, skills, goal, runIntervalSeconds,
        suggestedPolicy: { maxTradeUsd: p.max_trade_usd, maxDailyUsd: p.max_daily_usd, maxPriceImpactBps: p.max_price_impact_bps },
      })),
    })
  })
  // Built once: the same zod schemas the routes validate with, as OpenAPI 3.1.
  let openapi: object | undefined
  router.get('/openapi.json', rejectQuery, (ctx) => {
    ctx.body = openapi ??= openApiDocument(deps.core.modelIds)
  })
  return router
}

import Koa from 'koa'
import { Router } from '@koa/router'
import type { AppDeps } from './appDeps.ts'
import { requestId } from './middleware/requestId.ts'
import { traceContext } from './middleware/traceContext.ts'
import { jsonBody } from './middleware/jsonBody.ts'
import { errorEnvelope } from './middleware/errors.ts'
import { signedCursors } from './middleware/cursors.ts'
import { authenticate, requireOperator } from './middleware/auth.ts'
import { rateLimit } from './rateLimit.ts'
import { countingAuthFailures, perKeyRateLimit } from './middleware/keyLimits.ts'
import { publicRoutes } from './routes/public.routes.ts'
import { authRoutes } from './routes/auth.routes.ts'
import { accountRoutes } from './routes/account.routes.ts'
import { agentRoutes } from './routes/agents.routes.ts'
import { opsRoutes } from './routes/ops.routes.ts'
import { launchRoutes } from './routes/launch.routes.ts'
import { tokenRoutes } from './routes/tokens.routes.ts'
import { marketRoutes } from './routes/market.routes.ts'
import { intelRoutes } from './routes/intel.routes.ts'
import { feeRoutes } from './routes/fees.routes.ts'
import { billingRoutes } from './routes/billing.routes.ts'
import { devRoutes } from './routes/dev.routes.ts'
import { walletRoutes } from './routes/wallet.routes.ts'
import { createMetrics } from './metrics.ts'
import { swapRoutes } from './routes/swap.routes.ts'
import { chatRoutes } from './routes/chat.routes.ts'
import { runRoutes } from './routes/run.routes.ts'
import { automationRoutes } from './routes/automations.routes.ts'
import { backtestRoutes } from './routes/backtest.routes.ts'
import { customSkillRoutes, skillRegistryRoutes } from './routes/skills.routes.ts'
import { marketplacePublicRoutes, marketplaceRoutes } from './routes/marketplace.routes.ts'
import { mcpRoutes } from '../mcp/mcpRoutes.ts'
import { consoleRoutes } from './routes/console.routes.ts'
import { webhookRoutes } from './routes/webhooks.routes.ts'
import { approvalRoutes } from './routes/approvals.routes.ts'
import { hookRoutes } from './routes/hooks.routes.ts'
import { policyRoutes } from './routes/policies.routes.ts'
import { NotFoundError, ServiceError, ValidationError } from '../domain/errors.ts'
import { MethodNotAllowedError } from './inputErrors.ts'
import { nulFieldErrors } from './validate.ts'
import { ok } from './respond.ts'
import { literalRoutesFirst, segmentRoutes } from './segmentRoutes.ts'

/** Request bodies are refused past 1 MB, counted after decoding any Content-Encoding. */
const BODY_LIMIT_BYTES = 1024 * 1024
/**
 * The rest of a refused body is read and dropped, up to 8 MB as sent in all (and 10 s), before
 * the 413 goes out: a client still sending would otherwise see a reset instead of the answer.
 */
const BODY_DRAIN_LIMIT_BYTES = 8 * 1024 * 1024

/**
 * Builds the Koa app from its dependencies; nothing here reads globals, so a test can build
 * one against its own database.
 *
 * @example
 * const app = createApp(deps)
 * app.listen(3000)
 */
export function createApp(deps: AppDeps): Koa {
  const app = new Koa({ proxy: deps.config.trustProxy })
  const { rateLimit: limits } = deps.config

  const metrics = createMetrics(deps.core.metricsCounts)
  app.use(traceContext())
  app.use(requestId())
  app.use(errorEnvelope({ logger: deps.logger, serviceErrorOf: deps.core.serviceErrorOf }))
  app.use(metrics.middleware)
  app.use(jsonBody({ limitBytes: BODY_LIMIT_BYTES, drainLimitBytes: BODY_DRAIN_LIMIT_BYTES }))

  // PostgreSQL refuses NUL in text and jsonb: such input is a 422 here, never a failed write.
  app.use(async (ctx, next) => {
    // Cheap first: a body was parsed, or the query string can carry a NUL at all.
    const body = ctx.request.body
    const bad =
      (body !== undefined ? nulFieldErrors(body) : undefined) ??
      (/%00|\0/.test(ctx.querystring) ? nulFieldErrors(ctx.query) : undefined) ??
      // Path parameters are decoded by the router: a %00 in the path would reach a query as NUL.
      (/%00|\0/.test(ctx.path) ? { path: 'Must not contain NUL (\\u0000) characters.' } : undefined)
    if (bad) throw new ValidationError(bad)
    await next()
  })

  // Nothing answered: a 404 in the envelope (after allowedMethods had its chance to say 405).
  app.use(async (ctx, next) => {
    await next()
    if (ctx.body === undefined && ctx.status === 404) throw new NotFoundError('Route')
    // The router answers OPTIONS with an empty 200; every 2xx of the API carries a JSON body.
    if (ctx.method === 'OPTIONS' && ctx.status === 200 && !ctx.body) {
      ok(ctx, { methods: ctx.response.get('Allow').split(',').map((m) => m.trim()).filter(Boolean) })
      return
    }
    if (ctx.body === undefined && (ctx.status === 405 || ctx.status === 501)) {
      throw new MethodNotAllowedError({ allow: ctx.response.get('Allow') || 'GET' })
    }
  })

  // Prometheus scrapes with an operator key (Authorization: Bearer cpk_...).
  const scrape = new Router()
  scrape.get('/metrics', authenticate(deps.core), requireOperator(), async (ctx) => {
    ctx.type = metrics.contentType
    ctx.body = await metrics.render()
  })
  // The operator console's page and assets (the data comes from /api/v1/ops, operators only).
  app.use(segmentRoutes('', [{ use: [], routers: [scrape, consoleRoutes()] }]))

  // Public routes answer first; anything else under /api/v1 needs credentials. A request is
  // matched against the modules of its first path segment only (see segmentRoutes).
  const ipLimit = rateLimit({
    store: deps.rateLimitStore,
    policy: { name: 'ip', limit: limits.perIp, windowSeconds: limits.windowSeconds },
    keyOf: (ctx) => `ip:${ctx.ip}`,
    logger: deps.logger,
  })
  const cursors = signedCursors(deps.core.cursors)
  const publicApi = {
    use: [ipLimit, cursors],
    routers: [
      publicRoutes(deps), authRoutes(deps), tokenRoutes(deps), marketRoutes(deps), intelRoutes(deps), skillRegistryRoutes(deps), marketplacePublicRoutes(deps),
      hookRoutes(deps),
    ],
  }
  const api = {
    use: [countingAuthFailures(deps, authenticate(deps.core)), perKeyRateLimit(deps), cursors],
    routers: [
      ...[accountRoutes(deps), agentRoutes(deps), opsRoutes(deps), launchRoutes(deps), devRoutes(deps), walletRoutes(deps)],
      ...[swapRoutes(deps), feeRoutes(deps), billingRoutes(deps), chatRoutes(deps), runRoutes(deps), automationRoutes(deps)],
      ...[customSkillRoutes(deps), marketplaceRoutes(deps), webhookRoutes(deps), approvalRoutes(deps), backtestRoutes(deps), policyRoutes(deps)],
    ],
  }
  app.use(segmentRoutes('/api/v1', [publicApi, api]))
  // 405 (with Allow) or 501 from the routes matched by path; every router's answer is the same.
  app.use(literalRoutesFirst())
  app.use(new Router().allowedMethods())
  // The tool server (/api/mcp): a bearer key only, the same per-key limit.
  const mcp = mcpRoutes(deps)
  app.use(mcp.routes())
  app.use(mcp.allowedMethods())
  app.on('error', (err: unknown) => {
    if (!(err instanceof ServiceError)) deps.logger.debug({ err }, 'koa error event')
  })
  return app
}

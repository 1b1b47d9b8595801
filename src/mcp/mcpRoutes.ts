import { Router } from '@koa/router'
import type { Context, Middleware } from 'koa'
import { z } from 'zod'
import { createMcpHandler, type AuthInfo } from '@modelcontextprotocol/server'
import { toNodeHandler } from '@modelcontextprotocol/node'
import type { AppDeps } from '../http/appDeps.ts'
import { keyPrincipal, principalOf } from '../http/middleware/auth.ts'
import { countingAuthFailures, perKeyRateLimit } from '../http/middleware/keyLimits.ts'
import { ok } from '../http/respond.ts'
import { parse, rejectQuery } from '../http/validate.ts'
import { UnauthorizedError } from '../domain/errors.ts'
import { McpUnauthorizedError } from './mcpErrors.ts'
import { createMcpServer, errorEnvelope, runLoggedToolCall, type McpRequest } from './mcpServer.ts'
import { mcpToolsFor, mcpToolView } from './mcpTools.ts'
import { claimToolKey } from './mcpIdempotency.ts'

/** The body of POST /api/mcp/call (also in the OpenAPI document). */
export const mcpCallBody = z.strictObject({
  name: z.string('The tool name.').min(1, 'The tool name.').max(100, 'At most 100 characters.'),
  arguments: z.record(z.string(), z.unknown(), 'An object of the tool arguments.').optional(),
})

/** The tool server takes a bearer key only (no session cookie); a refusal carries the Bearer challenge. */
function bearerKeyOnly(deps: AppDeps): Middleware {
  return async (ctx, next) => {
    const header = ctx.get('Authorization')
    if (!header) throw new McpUnauthorizedError('Send "Authorization: Bearer cpk_..." (an API key of the account).', { invalidToken: false })
    try {
      ctx.state.principal = await keyPrincipal(deps.core, header)
    } catch (err) {
      if (err instanceof UnauthorizedError) throw new McpUnauthorizedError(err.message, { invalidToken: true })
      throw err
    }
    await next()
  }
}

/**
 * The tool server at `/api/mcp`: Streamable HTTP (MCP 2026-07-28, and the 2025 revisions that
 * most clients in the field still speak, served statelessly), plus `GET /api/mcp/tools` and
 * `POST /api/mcp/call` over plain JSON. Stateless: every request gets a fresh server and
 * transport, so any node answers any request and nothing must be sticky. The key's scopes decide
 * the tools; the per-key rate limit is the API's (one budget per key).
 */
export function mcpRoutes(deps: AppDeps): Router {
  const claimKey = claimToolKey(deps.core.idempotencyKeys)
  const requestOf = (ctx: Context): McpRequest => ({
    claimKey,
    core: deps.core,
    logger: deps.logger,
    principal: principalOf(ctx),
    requestId: ctx.state.requestId as string,
    account: async (accountId) => ({
      ...(await deps.core.getAccount({ accountId })),
      credits: await deps.core.getBilling({ accountId }),
    }),
  })
  const handler = createMcpHandler(
    ({ authInfo }) => createMcpServer(authInfo?.extra?.mcpRequest as McpRequest),
    { onerror: (err) => deps.logger.debug({ err: err.message }, 'mcp request refused') },
  )
  const serve = toNodeHandler(handler, { onerror: (err) => deps.logger.warn({ err }, 'mcp handler failed') })

  // Case-sensitive: @koa/router matches routes in any case but `use` middleware only in the case
  // written, so `/API/MCP/tools` would reach a route without the key check and the rate limit.
  const router = new Router({ prefix: '/api/mcp', sensitive: true })
  router.use(countingAuthFailures(deps, bearerKeyOnly(deps)))
  router.use(perKeyRateLimit(deps))

  router.get('/tools', rejectQuery, (ctx) => {
    const tools = mcpToolsFor(principalOf(ctx)).map((t) => {
      const { name, description, inputSchema, annotations } = mcpToolView(t)
      return { name, description, inputSchema, annotations }
    })
    ok(ctx, { tools })
  })

  router.post('/call', rejectQuery, async (ctx) => {
    const body = parse(mcpCallBody, ctx.request.body)
    const outcome = await runLoggedToolCall(requestOf(ctx), body.name, body.arguments ?? {}, 'http')
    if (outcome.ok) return ok(ctx, { result: outcome.result })
    ctx.status = outcome.status
    ctx.body = errorEnvelope(outcome)
  })

  // The transport writes the response itself: Koa hands it the raw request and response and the
  // body its JSON middleware already parsed.
  const transport = async (ctx: Context) => {
    const auth: AuthInfo = { token: '', clientId: principalOf(ctx).keyId ?? '', scopes: [...principalOf(ctx).scopes], extra: { mcpRequest: requestOf(ctx) } }
    ctx.respond = false
    await serve(Object.assign(ctx.req, { auth }), ctx.res, ctx.request.body)
  }
  router.post('/', transport)
  router.get('/', transport)
  router.delete('/', transport)
  return router
}


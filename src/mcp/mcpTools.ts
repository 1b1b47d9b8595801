import { randomUUID } from 'node:crypto'
import { z } from 'zod'
import type { Core } from '../app/coreApi.ts'
import type { Principal } from '../domain/accounts/scopes.ts'
import { fieldErrorsOf } from '../domain/fieldErrors.ts'
import { ForbiddenError, type ServiceError } from '../domain/errors.ts'
import { callTool, toolArgs, toolJsonSchema, type ToolOutcome } from '../tools/callTool.ts'
import { findTool, toolsFor } from '../tools/registry.ts'
import type { Tool } from '../tools/tool.ts'
import { McpIdempotencyKeyReusedError, McpToolNotFoundError } from './mcpErrors.ts'
import type { ToolKeyClaim } from './mcpIdempotency.ts'

/**
 * What the MCP layer adds to a fund-moving tool: nothing moves without `confirm: true` (the tool's
 * preview answers instead), and `idempotencyKey` names the call, so a retry finds its first result.
 */
const fundMovingArgs = z.strictObject({
  confirm: z.boolean('Must be true or false.').optional().describe('Set true to carry it out; left out or false, answers what would happen and changes nothing.'),
  idempotencyKey: z
    .string('1 to 255 printable characters.')
    .regex(/^[\x21-\x7e]{1,255}$/, '1 to 255 printable characters.')
    .optional()
    .describe('Any unique string (e.g. a uuid): a retry with the same key answers the first result and moves nothing twice.'),
})

/** A tool as an MCP client sees it: name, description, JSON Schema of its arguments and annotations. */
export type McpToolView = {
  name: string
  description: string
  inputSchema: Record<string, unknown>
  annotations: { readOnlyHint?: true; destructiveHint?: true }
}

const views = new WeakMap<Tool, McpToolView>()

/** The tool's MCP face (built once per tool). */
export function mcpToolView(tool: Tool): McpToolView {
  let view = views.get(tool)
  if (view) return view
  const schema = { ...toolJsonSchema(tool) } as { properties?: Record<string, unknown>; required?: string[] }
  if (tool.movesFunds) {
    const extra = z.toJSONSchema(fundMovingArgs, { io: 'input' }) as { properties: Record<string, unknown> }
    schema.properties = { ...schema.properties, ...extra.properties }
  }
  const description = tool.movesFunds
    ? `${tool.description} Moves funds: without confirm: true it only answers what would happen.`
    : tool.description
  const annotations = tool.movesFunds ? { destructiveHint: true as const } : tool.scope === 'read' ? { readOnlyHint: true as const } : {}
  views.set(tool, (view = { name: tool.name, description, inputSchema: schema, annotations }))
  return view
}

/** The tools this key may list and call: those its scopes allow, in the registry's order. */
export function mcpToolsFor(principal: Principal): Tool[] {
  return toolsFor({ scopes: principal.scopes })
}

/**
 * Calls a tool for an MCP client (over the transport or POST /api/mcp/call): the key's scopes
 * decide whether it may call the tool (as on the API: 403 without the scope), the
 * agent comes from `agent_id` (or is the account's only one), and a fund-moving tool runs only
 * with `confirm: true`, else its preview answers. Every bad argument is named in `fieldErrors`.
 *
 * @example
 * const outcome = await callMcpTool(core, principal, 'swap_execute', { tokenIn: 'ETH', tokenOut: 'USDC', amountIn: '0.1', confirm: true })
 */
export async function callMcpTool(core: Core, principal: Principal, name: string, rawArgs: unknown, claimKey?: ToolKeyClaim): Promise<ToolOutcome> {
  const tool = findTool(name)
  if (!tool) return refusal(new McpToolNotFoundError(name))
  // As on the API: a key without the scope is refused (403), and the tool is not in its list.
  if (!principal.scopes.includes(tool.scope)) return refusal(new ForbiddenError(`This key lacks the "${tool.scope}" scope that ${tool.name} needs.`))
  const args = rawArgs ?? {}
  let extras: z.infer<typeof fundMovingArgs> = {}
  let toolArgsOnly: unknown = args
  if (tool.movesFunds && typeof args === 'object' && !Array.isArray(args)) {
    const { confirm, idempotencyKey, ...rest } = args as Record<string, unknown>
    const parsed = fundMovingArgs.safeParse({ confirm, idempotencyKey })
    if (!parsed.success) {
      // One answer names every bad field: the tool's own ones too.
      const own = toolArgs(tool).safeParse(rest)
      const fieldErrors = { ...(own.success ? {} : fieldErrorsOf(own.error)), ...fieldErrorsOf(parsed.error) }
      return { ok: false, status: 422, error: { error: 'Invalid tool arguments.', code: 'validation_failed', fieldErrors } }
    }
    extras = parsed.data
    toolArgsOnly = rest
    if (claimKey && extras.idempotencyKey !== undefined && extras.confirm === true && toolArgs(tool).safeParse(rest).success) {
      // The same key with another call is refused as on the API; a preview or bad arguments claim nothing.
      try {
        await claimKey({ accountId: principal.accountId, key: extras.idempotencyKey, name: tool.name, args: rest })
      } catch (err) {
        if (err instanceof McpIdempotencyKeyReusedError) return refusal(err)
        throw err
      }
    }
  }
  return callTool(tool, toolArgsOnly, {
    core,
    accountId: principal.accountId,
    agent: 'choose',
    callId: extras.idempotencyKey ?? randomUUID(),
    mode: tool.movesFunds && extras.confirm !== true ? 'preview' : 'run',
    keyId: principal.keyId,
    scopes: principal.scopes,
  })
}

function refusal(err: ServiceError): ToolOutcome {
  return { ok: false, status: err.status, error: { error: err.message, code: err.code } }
}

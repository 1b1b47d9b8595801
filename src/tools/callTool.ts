import { z } from 'zod'
import { NotFoundError, ServiceError, ValidationError } from '../domain/errors.ts'
import { fieldErrorsOf } from '../domain/fieldErrors.ts'
import type { Core } from '../app/coreApi.ts'
import type { ParentBinding, Tool } from './tool.ts'
import type { ToolOutcome } from '../domain/toolCall.types.ts'
import type { Scope } from '../domain/accounts/scopes.ts'

export type { ToolOutcome }

/**
 * How the front door binds the agent: a chat turn or a run acts for one agent (an `agent_id`
 * naming another one is refused as not found); an MCP client names it with `agent_id`, which
 * may be left out when the account has exactly one agent.
 */
export type AgentBinding = { bound: string } | 'choose'

export type CallToolInput = {
  core: Core
  accountId: string
  agent: AgentBinding
  /** Stable per call: a tool-call effect's id, an MCP idempotency key. */
  callId: string
  /** The actor the call acts for (a chat turn, a run): fund-moving tools start their operation as its child. */
  parent?: ParentBinding | undefined
  /** `preview` answers what a fund-moving tool would do and changes nothing. */
  mode?: 'run' | 'preview'
  /** The API key the caller authenticated with (an MCP client's), recorded in the audit trail by admin tools. */
  keyId?: string | undefined
  /** The key's scopes (an MCP client's): a tool whose fields need more than its own scope checks them. */
  scopes?: readonly Scope[] | undefined
}

const agentIdArg = z.uuid('Must be an agent id.').optional().describe('The agent to act for; may be left out when the account has exactly one agent.')
const withAgent = new WeakMap<Tool, z.ZodObject>()

/** The tool's arguments as every front door parses them: its own fields and an optional `agent_id`. */
export function toolArgs(tool: Tool): z.ZodObject {
  if (tool.agent === 'none') return tool.args
  let schema = withAgent.get(tool)
  if (!schema) withAgent.set(tool, (schema = tool.args.extend({ agent_id: agentIdArg })))
  return schema
}

const jsonSchemas = new WeakMap<Tool, Record<string, unknown>>()

/** The arguments' JSON Schema (draft 2020-12), as a model's tool list and MCP's `inputSchema` show it (built once per tool; treat as read-only). */
export function toolJsonSchema(tool: Tool): Record<string, unknown> {
  let schema = jsonSchemas.get(tool)
  if (!schema) {
    const { $schema: _, ...built } = z.toJSONSchema(toolArgs(tool), { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>
    jsonSchemas.set(tool, (schema = built))
  }
  return schema
}

/**
 * Validates the arguments, binds the agent and calls the tool; a refusal is returned as the
 * API's error (the model is told why), anything else is thrown.
 *
 * @example
 * const outcome = await callTool(swapExecuteTool, { tokenIn: 'ETH', tokenOut: 'USDC', amountIn: '0.1' },
 *   { core, accountId, agent: { bound: agentId }, callId: toolCall.id })
 */
export async function callTool(tool: Tool, rawArgs: unknown, input: CallToolInput): Promise<ToolOutcome> {
  try {
    const parsed = toolArgs(tool).safeParse(openCursor(input.core, rawArgs ?? {}))
    if (!parsed.success) throw new ValidationError(fieldErrorsOf(parsed.error), 'Invalid tool arguments.')
    const { agent_id: named, ...args } = parsed.data as { agent_id?: string } & Record<string, unknown>
    const preview = input.mode === 'preview' && tool.preview !== undefined
    const account = { core: input.core, accountId: input.accountId, callId: input.callId, keyId: input.keyId, scopes: input.scopes }
    if (tool.agent === 'none') return { ok: true, result: sealCursor(input.core, preview ? await tool.preview!(account, args) : await tool.run(account, args)) }
    const call = { ...account, agentId: await bindAgent(input, named), parent: input.parent }
    return { ok: true, result: sealCursor(input.core, preview ? await tool.preview!(call, args) : await tool.run(call, args)) }
  } catch (err) {
    if (!(err instanceof ServiceError)) throw err
    const error = { error: err.message, code: err.code, ...(err.fieldErrors ? { fieldErrors: err.fieldErrors } : {}) }
    return { ok: false, error, status: err.status }
  }
}

/** A paging tool's `cursor` must carry the service's signature, as on the HTTP routes; the tool gets it without. */
function openCursor(core: Core, args: unknown): unknown {
  const cursor = args !== null && typeof args === 'object' ? (args as { cursor?: unknown }).cursor : undefined
  return typeof cursor === 'string' ? { ...(args as object), cursor: core.cursors.open(cursor) } : args
}

/** A page's `nextCursor` leaves signed (see src/http/middleware/cursors.ts). */
function sealCursor(core: Core, result: unknown): unknown {
  const next = result !== null && typeof result === 'object' ? (result as { nextCursor?: unknown }).nextCursor : undefined
  return typeof next === 'string' ? { ...(result as object), nextCursor: core.cursors.seal(next) } : result
}

async function bindAgent(input: CallToolInput, named: string | undefined): Promise<string> {
  if (input.agent !== 'choose') {
    if (named !== undefined && named !== input.agent.bound) throw new NotFoundError('Agent')
    return input.agent.bound
  }
  if (named) {
    // An agent the account cannot see is not found, whatever the tool does with it (one of the
    // account's agents is read; another account's or an unknown id is a 404).
    await input.core.getAgent({ accountId: input.accountId, agentId: named })
    return named
  }
  const agents = await input.core.listAgentIds(input.accountId, 2)
  if (agents.length === 1) return agents[0]!
  throw new ValidationError({ agent_id: agents.length === 0 ? 'The account has no agent: create one first.' : 'Required: the account has more than one agent.' })
}

import type { ParentBinding } from '../domain/toolCall.types.ts'
import type { z } from 'zod'
import type { Core } from '../app/coreApi.ts'
import type { Scope } from '../domain/accounts/scopes.ts'

/**
 * Who a tool acts for, resolved by the front door before the tool runs: the account, the agent
 * (bound by a chat turn or a run; chosen by `agent_id` over MCP) and a stable call id (the
 * model's tool call id, or an MCP client's idempotency key) from which a fund-moving tool
 * derives its operation id, so that a retried call never moves funds twice.
 */
export type ToolCall = {
  core: Core
  accountId: string
  agentId: string
  callId: string
  /** The actor (a chat turn, a run) the call acts for, when there is one: a fund-moving tool starts its operation as its child. */
  parent?: ParentBinding | undefined
  /** The API key the front door authenticated, when there is one (the audit trail names it with the tool). */
  keyId?: string | undefined
  /** The caller's scopes when a key called (MCP); a chat turn or a run has none, so it never holds `admin`. */
  scopes?: readonly Scope[] | undefined
}

export type { ParentBinding }

/** Reports the operation a fund-moving tool started as the call's child (when a parent is bound), and answers it. */
export function startedChild<T extends { id: string }>(call: Pick<ToolCall, 'parent'>, resource: T): T {
  call.parent?.started(resource.id)
  return resource
}

/** What an account-level tool (`agent: 'none'`) acts with: no agent is bound. */
export type AccountToolCall = Omit<ToolCall, 'agentId'>

/**
 * One action an agent can take, as a model or an MCP client sees it: a snake_case name, a
 * description written for a model, the arguments as a zod object (the use case's fields without
 * the agent, which the front door binds), the scope it needs and whether it moves funds.
 * `run` calls the same use case of `core` as the HTTP route, so the policy, the whitelist and the
 * caps hold exactly as on the API. A fund-moving tool has a `preview` that answers what would
 * happen (the quote, the launch preview, the transfer and its fee) and changes nothing.
 */
export type Tool<Args extends z.ZodObject = z.ZodObject> = {
  name: string
  description: string
  args: Args
  scope: Scope
  movesFunds: boolean
} & (
  | {
      /** Acts for one agent (the default): the front door binds it before `run`. */
      agent?: 'bind'
      run(call: ToolCall, args: z.infer<Args>): Promise<unknown>
      preview?(call: ToolCall, args: z.infer<Args>): Promise<unknown>
    }
  | {
      /** Acts for the account (list its agents, read its credits): no `agent_id`, nothing bound. */
      agent: 'none'
      run(call: AccountToolCall, args: z.infer<Args>): Promise<unknown>
      preview?(call: AccountToolCall, args: z.infer<Args>): Promise<unknown>
    }
)

/**
 * Declares a tool with its argument types inferred from `args`.
 *
 * @example
 * export const getAgentTool = defineTool({
 *   name: 'get_agent', description: 'Read this agent…', args: z.strictObject({}), scope: 'read', movesFunds: false,
 *   run: ({ core, accountId, agentId }) => core.getAgent({ accountId, agentId }),
 * })
 */
export function defineTool<Args extends z.ZodObject>(tool: Tool<Args>): Tool<Args> {
  if (tool.movesFunds && !tool.preview) throw new Error(`Tool ${tool.name} moves funds and needs a preview.`)
  return tool
}

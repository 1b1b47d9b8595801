import { z } from 'zod'
import { NotFoundError, ValidationError } from '../domain/errors.ts'
import { bracketSchema, createAutomationSchema, dcaSchema, limitSchema, listAutomationsSchema, mirrorSchema, protectiveSchema, trailingStopSchema, twapSchema, updateAutomationSchema, type CreateAutomationBody, type ListAutomationsQuery } from '../domain/automations/automation.schema.ts'
import { stableUuid } from '../domain/util/stableUuid.ts'
import type { AutomationKind } from '../domain/automations/automation.types.ts'
import { defineTool, type ToolCall } from './tool.ts'

const automationArg = { automation_id: z.uuid('An automation id (uuid).') }
const page = {
  status: listAutomationsSchema.shape.status,
  limit: z.number('An integer from 1 to 100.').int('An integer from 1 to 100.').min(1, 'An integer from 1 to 100.').max(100, 'An integer from 1 to 100.').default(20),
  cursor: z.string('The nextCursor of the previous page.').max(300).optional(),
}
const named = { name: createAutomationSchema.shape.name, description: createAutomationSchema.shape.description, max_spend_usd: createAutomationSchema.shape.max_spend_usd }
const createArgs = createAutomationSchema.omit({ agent_id: true, agentId: true })
const dcaArgs = z.strictObject({ ...named, ...dcaSchema.shape })
const limitArgs = z.strictObject({ ...named, ...limitSchema.shape })
/** The kinds with a tool of their own (a sniper is made with create_automation). */
type ShorthandKind = Exclude<AutomationKind, 'custom' | 'sniper'>
type Named = { name: string; description?: string | undefined; max_spend_usd?: string | undefined }

/** The bound agent's automation (another agent's or account's is not found); of this kind when one is named. */
async function ownAutomation({ core, accountId, agentId }: ToolCall, automationId: string, kind?: ShorthandKind) {
  const a = await core.getAutomation({ accountId, automationId })
  if (a.agentId !== agentId) throw new NotFoundError('Automation')
  if (kind && a.kind !== kind) throw new ValidationError({ automation_id: `Not a ${kind} automation (it is ${a.kind}): use delete_automation.` })
  return a
}

/** A shorthand's arguments as the body of POST /automations: the name and budget at the top, the kind's parameters under it. */
function kindBody(call: ToolCall, kind: ShorthandKind, { name, description, max_spend_usd, ...params }: Named & Record<string, unknown>): CreateAutomationBody {
  return { agent_id: call.agentId, name, kind, [kind]: params, ...(description !== undefined ? { description } : {}), ...(max_spend_usd ? { max_spend_usd } : {}) } as CreateAutomationBody
}

/**
 * Creates the automation under an id derived from the call id: a retried call (the same MCP
 * idempotency key, the same model tool call) finds the automation it created.
 */
const create = (tool: string) => (call: ToolCall, body: CreateAutomationBody) =>
  call.core.createAutomation({ accountId: call.accountId, automationId: stableUuid(call.accountId, `tool/${tool}`, call.callId), body })
const preview = (call: ToolCall, body: CreateAutomationBody) => call.core.previewAutomation({ accountId: call.accountId, body })
const list = ({ core, accountId, agentId }: ToolCall, a: Pick<ListAutomationsQuery, 'status' | 'limit' | 'cursor'>, kind?: 'dca') =>
  core.listAutomations({ accountId, query: { agent_id: agentId, limit: a.limit, ...(a.status ? { status: a.status } : {}), ...(kind ? { kind } : {}), ...(a.cursor ? { cursor: a.cursor } : {}) } })
const cancel = (kind?: 'dca' | 'limit') => async (call: ToolCall, { automation_id }: { automation_id: string }) => {
  await ownAutomation(call, automation_id, kind)
  return call.core.cancelAutomation({ accountId: call.accountId, automationId: automation_id })
}

export const listAutomationsTool = defineTool({
  name: 'list_automations',
  description: "List the agent's automations (DCA, limit orders, snipers, custom), newest first, with status, trigger, action, counters and last firings. `status` filters; pass nextCursor back as cursor.",
  args: z.strictObject(page),
  scope: 'read',
  movesFunds: false,
  run: (call, a) => list(call, a),
})

export const getAutomationTool = defineTool({
  name: 'get_automation',
  description: "Read one of the agent's automations: its trigger, action, status, budgets, next run and its last firings (outcome, tx hash or reason).",
  args: z.strictObject(automationArg),
  scope: 'read',
  movesFunds: false,
  run: (call, { automation_id }) => ownAutomation(call, automation_id),
})

export const createAutomationTool = defineTool({
  name: 'create_automation',
  description:
    'Create an automation for the agent: either a kind with its parameters (dca, limit, sniper, stop_loss, take_profit, ' +
    'trailing_stop, bracket or twap) or a trigger ' +
    '(schedule, interval, price_threshold, new_launch) and an action (a tool_call of a tool the agent is granted, or an ' +
    'agent_prompt). Each firing runs within the agent policy, only while the agent is running; max_firings and ' +
    'max_spend_usd cap it. A price threshold already met is refused.',
  args: createArgs,
  scope: 'trade',
  movesFunds: true,
  run: (call, args) => create('create_automation')(call, { ...args, agent_id: call.agentId }),
  preview: (call, args) => preview(call, { ...args, agent_id: call.agentId }),
})

export const updateAutomationTool = defineTool({
  name: 'update_automation',
  description:
    "Change one of the agent's automations: status paused (pause) or armed (resume, or re-arm after error), name, " +
    'description, trigger, action, trigger_once, catch_up, max_firings, max_spend_usd. Effective from the next firing.',
  args: z.strictObject({ ...automationArg, ...updateAutomationSchema.shape }),
  scope: 'trade',
  movesFunds: true,
  run: async (call, { automation_id, ...body }) => {
    await ownAutomation(call, automation_id)
    return call.core.updateAutomation({ accountId: call.accountId, automationId: automation_id, body })
  },
  preview: async (call, { automation_id, ...body }) => {
    await ownAutomation(call, automation_id)
    return call.core.previewUpdateAutomation({ accountId: call.accountId, automationId: automation_id, body })
  },
})

export const triggerAutomationTool = defineTool({
  name: 'trigger_automation',
  description: "Fire one of the agent's automations now, once (after a firing in flight). A paused, completed or cancelled automation refuses.",
  args: z.strictObject(automationArg),
  scope: 'trade',
  movesFunds: true,
  run: async (call, { automation_id }) => {
    await ownAutomation(call, automation_id)
    return call.core.triggerAutomation({ accountId: call.accountId, automationId: automation_id })
  },
  preview: async (call, { automation_id }) => {
    await ownAutomation(call, automation_id)
    return call.core.previewTriggerAutomation({ accountId: call.accountId, automationId: automation_id })
  },
})

export const deleteAutomationTool = defineTool({
  name: 'delete_automation',
  description: "Cancel one of the agent's automations: it fires no more (a firing in flight ends first). Answers the automation.",
  args: z.strictObject(automationArg),
  scope: 'trade',
  movesFunds: false,
  run: cancel(),
})

export const dcaCreateTool = defineTool({
  name: 'dca_create',
  description:
    'Create a DCA for the agent: swap amountPerRun of tokenIn into tokenOut every everySeconds (first at once), up to ' +
    'maxRuns times, within the agent policy and max_spend_usd. Tokens are symbols (ETH, USDC, TSLAx) or 0x addresses.',
  args: dcaArgs,
  scope: 'trade',
  movesFunds: true,
  run: (call, args) => create('dca_create')(call, kindBody(call, 'dca', args)),
  preview: (call, args) => preview(call, kindBody(call, 'dca', args)),
})

export const dcaListTool = defineTool({
  name: 'dca_list',
  description: "List the agent's DCA automations, newest first, with status, runs done and last firings.",
  args: z.strictObject(page),
  scope: 'read',
  movesFunds: false,
  run: (call, a) => list(call, a, 'dca'),
})

export const dcaCancelTool = defineTool({
  name: 'dca_cancel',
  description: "Cancel one of the agent's DCA automations: it swaps no more.",
  args: z.strictObject(automationArg),
  scope: 'trade',
  movesFunds: false,
  run: cancel('dca'),
})

export const limitOrderCreateTool = defineTool({
  name: 'limit_order_create',
  description:
    'Create a limit order for the agent: swap amountIn of tokenIn into tokenOut once, when the USD price of mint ' +
    '(default: tokenOut for lte, tokenIn for gte) crosses priceUsd (operator lte: at or below; gte: at or above). ' +
    'A threshold already met is refused; expiresAt ends it unfilled.',
  args: limitArgs,
  scope: 'trade',
  movesFunds: true,
  run: (call, args) => create('limit_order_create')(call, kindBody(call, 'limit', args)),
  preview: (call, args) => preview(call, kindBody(call, 'limit', args)),
})

export const limitOrderCancelTool = defineTool({
  name: 'limit_order_cancel',
  description: "Cancel one of the agent's limit orders before it fills.",
  args: z.strictObject(automationArg),
  scope: 'trade',
  movesFunds: false,
  run: cancel('limit'),
})

/** A create tool of a protective or sliced kind: its parameters beside the name and budget, as the `dca_create` one. */
function orderCreateTool<S extends z.ZodRawShape>(name: string, kind: ShorthandKind, shape: S, description: string) {
  return defineTool({
    name,
    description,
    args: z.strictObject({ ...named, ...shape }),
    scope: 'trade',
    movesFunds: true,
    run: (call, args) => create(name)(call, kindBody(call, kind, args as Named & Record<string, unknown>)),
    preview: (call, args) => preview(call, kindBody(call, kind, args as Named & Record<string, unknown>)),
  })
}
const sells = 'share (0-1, default 1) of the agent holding of token into quoteOut (default USDC), once'

export const stopLossCreateTool = orderCreateTool('stop_loss_create', 'stop_loss', protectiveSchema.shape,
  `Create a stop-loss for the agent: sell ${sells}, when the USD price of token is at or below priceUsd. A level already met is refused.`)
export const takeProfitCreateTool = orderCreateTool('take_profit_create', 'take_profit', protectiveSchema.shape,
  `Create a take-profit for the agent: sell ${sells}, when the USD price of token is at or above priceUsd. A level already met is refused.`)
export const trailingStopCreateTool = orderCreateTool('trailing_stop_create', 'trailing_stop', trailingStopSchema.shape,
  `Create a trailing stop for the agent: sell ${sells}, when the price falls trailPct percent (or trailUsd USD; give one) below the highest price seen since it was armed.`)
export const bracketCreateTool = orderCreateTool('bracket_create', 'bracket', bracketSchema.shape,
  `Create a bracket for the agent: a take-profit at takeProfitUsd and a stop-loss at stopLossUsd on one holding; the first to fire sells ${sells}, and cancels the other.`)
export const twapCreateTool = orderCreateTool('twap_create', 'twap', twapSchema.shape,
  'Create a TWAP for the agent: swap amountIn (the total) of tokenIn into tokenOut in slices equal slices at even intervals over overSeconds ' +
  '(the first at once); a slice whose quoted price impact is over maxPriceImpactBps is skipped and reported. Never more than the total.')

export const mirrorCreateTool = orderCreateTool('mirror_create', 'mirror', mirrorSchema.shape,
  'Create a mirror (copy trading) for the agent: repeat each confirmed swap of leaderAgentId (an agent of this account, or a public agent whose owner allows copying) ' +
  'at ratio of its amount, as this agent\'s own swap under its policy. A copy over maxPerTradeUsd (after the ratio), of a token outside tokens (when given: both sides must be listed), ' +
  'or seen more than maxDelaySeconds after the leader\'s swap confirmed is refused and reported, never capped. A mirror that would copy its own copies is refused (mirror_cycle).')

/** The automation tools (the reference MCP catalogue's names). */
export const AUTOMATION_TOOLS = [
  listAutomationsTool, getAutomationTool, createAutomationTool, updateAutomationTool, triggerAutomationTool, deleteAutomationTool,
  dcaCreateTool, dcaListTool, dcaCancelTool, limitOrderCreateTool, limitOrderCancelTool,
  stopLossCreateTool, takeProfitCreateTool, trailingStopCreateTool, bracketCreateTool, twapCreateTool, mirrorCreateTool,
] as const

/** Tools an automation's action may never be: a firing must not create or change automations. */
export const AUTOMATION_TOOL_NAMES: ReadonlySet<string> = new Set(AUTOMATION_TOOLS.map((t) => t.name))

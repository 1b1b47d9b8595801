import type { Scope } from '../domain/accounts/scopes.ts'
import type { Tool } from './tool.ts'
import { stableUuid } from '../domain/util/stableUuid.ts'
import { createAgentTool, getAgentTool, updateAgentTool } from './agentTools.ts'
import { chatWithAgentTool, getChatHistoryTool, UNGRANTABLE_TOOLS } from './chatTools.ts'
import { createCustomSkillTool, listCustomSkillsTool } from './skillTools.ts'
import { RUN_TOOL_NAMES, RUN_TOOLS } from './runTools.ts'
import { swapExecuteTool, swapQuoteTool } from './swapTools.ts'
import { claimFeesTool, getFeeEarningsTool } from './feeTools.ts'
import { getPriceTool, getTokenTool, listTokensTool } from './tokenTools.ts'
import { INTEL_TOOLS } from './intelTools.ts'
import { WALLET_TOOLS } from './walletTools.ts'
import { getLaunchStatusTool, launchPreviewTool, launchTokenTool } from './launchTools.ts'
import { getBalanceTool, getModelCatalogTool, getTransactionsTool, listAgentsTool } from './accountTools.ts'
import { MARKETPLACE_TOOL_NAMES, MARKETPLACE_TOOLS } from './marketplaceTools.ts'
import { AUTOMATION_TOOLS } from './automationTools.ts'

/**
 * Every tool, in the order a model's tool list shows them. Chat turns, runs and the MCP server
 * serve these; each feature adds its tools here.
 */
export const TOOLS: readonly Tool[] = [
  getAgentTool, swapQuoteTool, swapExecuteTool,
  ...WALLET_TOOLS,
  getPriceTool, listTokensTool, getTokenTool,
  ...INTEL_TOOLS,
  getFeeEarningsTool, claimFeesTool,
  launchPreviewTool, launchTokenTool, getLaunchStatusTool,
  listAgentsTool, getBalanceTool, getTransactionsTool, getModelCatalogTool,
  createAgentTool, updateAgentTool, chatWithAgentTool, getChatHistoryTool,
  listCustomSkillsTool, createCustomSkillTool,
  ...RUN_TOOLS,
  ...MARKETPLACE_TOOLS,
  ...AUTOMATION_TOOLS,
] as unknown as readonly Tool[]

const byName = new Map(TOOLS.map((t) => [t.name, t]))

/**
 * Whether a skill may grant the tool to a model that acts for one agent: never a tool that acts
 * for the whole account (`agent: 'none'`: list or create agents, create skills), that changes the
 * agent itself (`update_agent`: its skills would widen its own tools), or that chats with it
 * (`chat_with_agent`, `get_chat_history`: a model must not chat with itself), nor the run tools (a
 * model must not start or cancel its own agent's runs), nor the market's (a model must not sell its agent). MCP clients still
 * call all of them with a key's scopes.
 */
const grantable = (t: Tool) =>
  t.agent !== 'none' && t.name !== 'update_agent' && !UNGRANTABLE_TOOLS.has(t.name) && !RUN_TOOL_NAMES.has(t.name) && !MARKETPLACE_TOOL_NAMES.has(t.name)

/** The tools a skill may grant. */
export const TOOL_NAMES: ReadonlySet<string> = new Set(TOOLS.filter(grantable).map((t) => t.name))

/**
 * The ids a call's operation may have: each fund-moving tool derives its operation's (a swap,
 * a transfer, a claim, a launch) from the call id as `tool/<name>`, so a retried call finds it.
 */
export const operationIdsOf = (accountId: string, callId: string): string[] =>
  TOOLS.filter((t) => t.movesFunds).map((t) => stableUuid(accountId, `tool/${t.name}`, callId))

export function findTool(name: string): Tool | undefined {
  return byName.get(name)
}

/**
 * The tools a caller may see: those its scopes allow and, when `granted` is given (an agent's
 * skills), only those granted.
 *
 * @example
 * toolsFor({ scopes: ['read', 'trade'], granted: grantedTools(agent.skills) })
 */
export function toolsFor({ scopes, granted }: { scopes: readonly Scope[]; granted?: ReadonlySet<string> }): Tool[] {
  return TOOLS.filter((t) => scopes.includes(t.scope) && (!granted || (granted.has(t.name) && grantable(t))))
}

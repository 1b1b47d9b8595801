import type { Core } from '../app/coreApi.ts'
import type { ToolInfo, ToolPort } from '../domain/toolCall.types.ts'
import { callTool, toolJsonSchema } from './callTool.ts'
import { findTool, operationIdsOf } from './registry.ts'

/** A tool of the registry as an actor sees it, or undefined. */
export function toolInfo(name: string): ToolInfo | undefined {
  const t = findTool(name)
  return t && { name: t.name, description: t.description, scope: t.scope, movesFunds: t.movesFunds, parameters: () => toolJsonSchema(t) }
}

/** The tool registry as a port for the actors that call tools, calling the tools with `core` (a getter: the core is built after the runtime). */
export function createToolPort(core: () => Core): ToolPort {
  return {
    find: toolInfo,
    operationIdsOf,
    call(name, args, { accountId, agentId, callId, parent }) {
      const tool = findTool(name)
      if (!tool) throw new Error(`no tool ${name}`)
      return callTool(tool, args, { core: core(), accountId, agent: { bound: agentId }, callId, parent })
    },
  }
}

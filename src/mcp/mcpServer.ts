import { McpServer, type CallToolResult, type StandardSchemaWithJSON } from '@modelcontextprotocol/server'
import type { Core } from '../app/coreApi.ts'
import type { Principal } from '../domain/accounts/scopes.ts'
import type { Logger } from '../logger.ts'
import type { ToolOutcome } from '../tools/callTool.ts'
import { callMcpTool, mcpToolsFor, mcpToolView } from './mcpTools.ts'
import type { ToolKeyClaim } from './mcpIdempotency.ts'

/** Who an MCP request acts for and where its tool calls are logged; one per HTTP request. */
export type McpRequest = {
  core: Core
  logger: Logger
  principal: Principal
  requestId: string
  /** The account resource: the profile and its credits. */
  account(accountId: string): Promise<object>
  /** Records a confirmed call's idempotencyKey with its fingerprint (422 when the key named another call). */
  claimKey?: ToolKeyClaim | undefined
}

/**
 * An input schema that lets every value through to the tool, which parses it itself: the SDK's
 * own check would answer a bad argument in its words, where the API's `{ error, code,
 * field_errors }` naming each field is wanted. The JSON Schema is the tool's, as `tools/list` shows it.
 */
function advertised(schema: Record<string, unknown>): StandardSchemaWithJSON {
  return {
    '~standard': { version: 1, vendor: 'agent-launch-trading', validate: (value: unknown) => ({ value }), jsonSchema: { input: () => schema, output: () => schema } },
  }
}

/**
 * Calls one tool for the request and writes the request log line (request id, key, tool, outcome,
 * time); the answer is the result, or the API's error envelope.
 */
export async function runLoggedToolCall(req: McpRequest, name: string, args: unknown, via: 'mcp' | 'http'): Promise<ToolOutcome> {
  const t0 = performance.now()
  const outcome = await callMcpTool(req.core, req.principal, name, args, req.claimKey)
  const confirm = typeof args === 'object' && args !== null && (args as { confirm?: unknown }).confirm === true
  req.logger.info(
    {
      requestId: req.requestId, accountId: req.principal.accountId, keyId: req.principal.keyId, tool: name.slice(0, 100), via, confirm,
      status: outcome.ok ? 200 : outcome.status, ...(outcome.ok ? {} : { code: outcome.error.code }), ms: Math.round(performance.now() - t0),
    },
    'tool call',
  )
  return outcome
}

/** The error envelope of a refused call, as the API answers it. */
export function errorEnvelope(outcome: Extract<ToolOutcome, { ok: false }>) {
  const { error, code, fieldErrors } = outcome.error
  return { error, code, ...(fieldErrors ? { field_errors: fieldErrors } : {}) }
}

function toolResult(outcome: ToolOutcome): CallToolResult {
  const body = outcome.ok ? (outcome.result as Record<string, unknown>) : errorEnvelope(outcome)
  return { content: [{ type: 'text', text: JSON.stringify(body) }], structuredContent: body, ...(outcome.ok ? {} : { isError: true }) }
}

const json = (uri: URL, value: unknown) => ({ contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify(value) }] })

/**
 * A fresh MCP server for one request: the registry's tools this key's scopes allow, and the
 * account, its agents and the model catalog as resources. Nothing outlives the request.
 */
export function createMcpServer(req: McpRequest): McpServer {
  const server = new McpServer(
    { name: 'agent-launch-trading', version: '0.1.0' },
    { instructions: 'Trading agents of one account. Fund-moving tools answer a preview unless called with confirm: true; agent_id may be left out when the account has one agent.' },
  )
  for (const tool of mcpToolsFor(req.principal)) {
    const view = mcpToolView(tool)
    server.registerTool(
      view.name,
      { description: view.description, inputSchema: advertised(view.inputSchema), annotations: view.annotations },
      async (args: unknown) => toolResult(await runLoggedToolCall(req, view.name, args, 'mcp')),
    )
  }
  const accountId = req.principal.accountId
  if (req.principal.scopes.includes('read')) {
    server.registerResource('account', 'alts://account', { description: 'The account: its profile and credits.', mimeType: 'application/json' }, async (uri) =>
      json(uri, await req.account(accountId)),
    )
    server.registerResource('agents', 'alts://agents', { description: 'The newest 100 agents of the account.', mimeType: 'application/json' }, async (uri) =>
      json(uri, { agents: (await req.core.listAgents({ accountId, limit: 100 })).agents }),
    )
  }
  server.registerResource('models', 'alts://models', { description: 'The model catalog with credit prices.', mimeType: 'application/json' }, async (uri) =>
    json(uri, { models: req.core.listModels() }),
  )
  return server
}

import type { ImportEdge } from './importGraph.ts'

/**
 * The layers of src/ (docs/architecture.md, "Layers"): each folder, the folders it may import (types
 * included), checked by test/importGraph.test.ts. A folder is a layer's unit: `src/actors/<kind>`
 * and `src/adapters/<name>` are each one, `src/domain` is one. `mayImport` lists folders; an entry ending
 * in `.ts` is one file of a folder (`src/app/coreApi.ts`: the front doors name only `Core`).
 */
export type Layer = { folder: string; owns: string; mayImport: readonly string[]; typesOnly?: readonly string[] }

const RUNTIME = 'src/actors/runtime/index.ts'
const ACTOR_KINDS = ['agent', 'automation', 'chatTurn', 'launch', 'run', 'walletOp'] as const
const ADAPTERS = ['chain', 'db', 'llm', 'telemetry', 'webhooks'] as const

export const LAYERS: readonly Layer[] = [
  { folder: 'src', owns: 'entries: main, boot, cluster; config, logger, tracing', mayImport: ['src/*'] },
  { folder: 'src/http', owns: 'the HTTP front door (koa routes, middleware, OpenAPI)', mayImport: ['src/domain', 'src/app/coreApi.ts', 'src/config.ts', 'src/logger.ts'] },
  { folder: 'src/mcp', owns: 'the MCP front door, mounted by src/http', mayImport: ['src/domain', 'src/tools', 'src/http', 'src/app/coreApi.ts', 'src/logger.ts'] },
  { folder: 'src/tools', owns: 'the tool registry (chat turns, runs, MCP)', mayImport: ['src/domain', 'src/app/coreApi.ts'] },
  {
    folder: 'src/app',
    owns: 'the composition root: Core, its use cases wired to adapters, actors and the runtime',
    mayImport: ['src/domain', RUNTIME, ...ACTOR_KINDS.map((k) => `src/actors/${k}`), 'src/actors/conversation', ...ADAPTERS.map((a) => `src/adapters/${a}`), 'src/dev', 'src/dev/artifacts', 'src/config.ts', 'src/logger.ts'],
  },
  ...ACTOR_KINDS.map((k) => ({
    folder: `src/actors/${k}`,
    owns: `the ${k} actor kind: machine, effects, hooks`,
    mayImport: ['src/domain', RUNTIME, 'src/actors/conversation', ...ACTOR_KINDS.map((o) => `src/actors/${o}`), 'src/logger.ts'],
  })),
  { folder: 'src/actors/conversation', owns: 'model and tool calls shared by chat turns and runs', mayImport: ['src/domain', RUNTIME, 'src/logger.ts'] },
  { folder: 'src/actors/runtime', owns: 'the durable actor runtime (node, pg, xstate, zod only)', mayImport: [] },
  { folder: 'src/domain', owns: 'features: pure decisions, use cases, ports', mayImport: [], typesOnly: [RUNTIME] },
  ...ADAPTERS.map((a) => ({
    folder: `src/adapters/${a}`,
    owns: `the ${a} adapter: implements domain ports`,
    mayImport: ['src/domain', RUNTIME, ...ADAPTERS.filter((o) => o !== a && o !== 'webhooks').map((o) => `src/adapters/${o}`), 'src/dev/artifacts', 'src/config.ts', 'src/logger.ts'],
  })),
  { folder: 'src/dev', owns: 'development only: anvil, contracts, embedded Postgres, faucet', mayImport: ['src/domain', 'src/dev/artifacts', 'src/adapters/chain', 'src/adapters/db', 'src/logger.ts'] },
  { folder: 'src/dev/artifacts', owns: 'the reference contracts\' compiled ABIs and bytecode (data)', mayImport: [] },
]

/** The folder (layer unit) a file of src/ belongs to. */
export function folderOf(file: string): string {
  const p = file.split('/')
  if (p.length === 2) return 'src'
  if (p[1] === 'dev' && p[2] === 'artifacts') return 'src/dev/artifacts'
  if (p[1] === 'actors' || p[1] === 'adapters') return p.slice(0, 3).join('/')
  return p.slice(0, 2).join('/')
}

const covers = (target: string, file: string) =>
  target === 'src/*' ? true : target.endsWith('.ts') ? file === target : file.startsWith(`${target}/`)

/** Whether an import breaks its layer's rule. Imports inside one folder are free. */
export function breaksLayer(e: ImportEdge): boolean {
  if (!e.to) return false
  const from = folderOf(e.from)
  if (from === folderOf(e.to)) return false
  const layer = LAYERS.find((l) => l.folder === from)
  if (!layer) return true
  if (layer.mayImport.some((t) => covers(t, e.to!))) return false
  return !(e.typeOnly && (layer.typesOnly ?? []).some((t) => covers(t, e.to!)))
}

/** The imports between folders, as edges from folder to folder (for `importCircles`: the folder cycles). */
export function folderEdges(edges: readonly ImportEdge[]): ImportEdge[] {
  return edges.flatMap((e) => (e.to && folderOf(e.from) !== folderOf(e.to) ? [{ from: folderOf(e.from), specifier: e.specifier, to: folderOf(e.to), typeOnly: e.typeOnly }] : []))
}

const UNITS = ['src/http', 'src/mcp', 'src/tools', 'src/app', ...ACTOR_KINDS.map((k) => `src/actors/${k}`), 'src/actors/conversation', 'src/actors/runtime', 'src/domain', ...ADAPTERS.map((a) => `src/adapters/${a}`), 'src/dev', 'src/dev/artifacts']

/** A list of folders as the table writes it: every actor kind as `src/actors/<kind>`, every adapter as `src/adapters/*`. */
function names(list: readonly string[]): string {
  const kinds = ACTOR_KINDS.map((k) => `src/actors/${k}`)
  const adapters = ADAPTERS.map((a) => `src/adapters/${a}`)
  let out = [...list]
  if (kinds.every((k) => out.includes(k))) out = [...out.filter((t) => !kinds.includes(t)), 'src/actors/<kind>']
  const others = adapters.filter((a) => out.includes(a))
  if (others.length === adapters.length) out = [...out.filter((t) => !adapters.includes(t)), 'src/adapters/*']
  return out.length ? out.map((t) => `\`${t === 'src/*' ? 'all of src/' : t}\``).join(', ') : 'nothing of `src/`'
}

/** The row of docs/architecture.md's layer table for a layer (test/importGraph.test.ts finds each in the page). */
export function layerRow(l: Layer): string {
  const allowed = [...l.mayImport, ...(l.typesOnly ?? [])]
  const runtimeEntry = allowed.includes(RUNTIME)
  const not = UNITS.filter((u) => u !== l.folder && !allowed.some((t) => t === u || (t.endsWith('.ts') && t.startsWith(`${u}/`)) || t === 'src/*'))
  const may = names(l.mayImport) + (l.typesOnly?.length ? `; types only: ${names(l.typesOnly)}` : '')
  const artifacts = allowed.includes('src/dev/artifacts')
  const left = not.filter((u) => !(runtimeEntry && u === 'src/actors/runtime') && !(artifacts && u === 'src/dev'))
  const mayNot = l.mayImport.includes('src/*') ? 'nothing is forbidden (an entry)' : names(left) + (runtimeEntry ? '; the runtime beyond its `index.ts`' : '') + (artifacts ? '; `src/dev` beyond its artifacts' : '')
  return `| \`${l.folder}/\` | ${l.owns} | ${may} | ${mayNot} |`
}

/**
 * The imports that break a layer rule today, each file with what it imports and why it still
 * does: a list that can only shrink (test/importGraph.test.ts fails on an import not listed, on a
 * listed one that is gone, and when the count grows past `LAYER_EXCEPTIONS_AT_MOST`).
 */
export const LAYER_EXCEPTIONS: readonly { from: string; to: readonly string[]; why: string }[] = [
  // Actor kinds reaching adapters directly: writes that must join the transition's commit (SqlWrite), and the chain.
  { from: 'src/actors/automation/automation.effects.ts', to: ['src/adapters/telemetry/spans.ts', 'src/adapters/db/automations.store.ts'], why: 'tool span; the automations store handed in, typed by its adapter' },
  { from: 'src/actors/automation/automationHooks.ts', to: ['src/adapters/db/automationHooks.store.ts'], why: 'the automation hooks\' SQL writes in the transition\'s commit' },
  { from: 'src/actors/automation/automations.ts', to: ['src/adapters/db/automations.store.ts'], why: 'the store\'s row and port types (type only)' },
  { from: 'src/actors/chatTurn/chatTurns.ts', to: ['src/adapters/db/credits.repository.ts', 'src/adapters/db/chatMessages.repository.ts'], why: 'credit guard and message insert composed into the turn\'s creating statement' },
  { from: 'src/actors/conversation/conversation.effects.ts', to: ['src/adapters/llm/modelCatalog.ts', 'src/adapters/db/chatMessages.repository.ts'], why: 'the model catalog\'s type; the answer\'s message insert in the commit' },
  { from: 'src/actors/conversation/modelCall.effects.ts', to: ['src/adapters/llm/modelCatalog.ts'], why: 'the model catalog\'s type (type only)' },
  { from: 'src/actors/conversation/toolCall.effects.ts', to: ['src/adapters/db/walletOp.store.ts', 'src/adapters/telemetry/spans.ts'], why: 'the unstarted reservation\'s release in the commit; tool span' },
  { from: 'src/actors/launch/launch.effects.ts', to: ['src/adapters/db/tokens.store.ts', 'src/adapters/chain/chain.ts', 'src/adapters/chain/txSender.ts', 'src/adapters/chain/launchTx.ts', 'src/adapters/chain/launchSimulation.ts', 'src/adapters/chain/paperLaunch.ts'], why: 'the launch\'s chain side (plan, simulate, send) and its token row in the commit' },
  { from: 'src/actors/launch/launches.ts', to: ['src/adapters/db/walletOp.store.ts', 'src/adapters/db/marketGuard.ts'], why: 'spend reservation and market guard composed into the launch\'s creating statement' },
  { from: 'src/actors/run/runs.ts', to: ['src/adapters/db/agents.repository.ts', 'src/adapters/db/credits.repository.ts', 'src/adapters/db/chatMessages.repository.ts'], why: 'schedule facts, credit guard and message insert composed into the run\'s creating statement' },
  { from: 'src/actors/walletOp/policyGate.ts', to: ['src/adapters/db/ownerPolicy.store.ts', 'src/adapters/db/walletOp.store.ts'], why: 'the owners\' policies read under the agent\'s lock, in the operation\'s creating transaction' },
  { from: 'src/actors/walletOp/walletOp.effects.ts', to: ['src/adapters/chain/chain.ts', 'src/adapters/chain/txSender.ts', 'src/adapters/chain/walletOpPorts.ts', 'src/adapters/chain/priceReader.ts'], why: 'the operation\'s chain side: outbox, planners, gas price' },
  { from: 'src/actors/walletOp/walletOps.ts', to: ['src/adapters/db/swapQuote.store.ts', 'src/adapters/db/walletOp.store.ts', 'src/adapters/db/automations.store.ts', 'src/adapters/db/marketGuard.ts'], why: 'quote claim, spend reservation, parent budget and market guard in the operation\'s creating statement' },
  // The composition root importing front doors (folder cycles with src/tools and src/http).
  { from: 'src/app/core.ts', to: ['src/tools/registry.ts', 'src/tools/toolPort.ts'], why: 'Core answers the tools a key or skill may use; a run\'s first call holds its tools\' prompt' },
  { from: 'src/app/automationUseCases.ts', to: ['src/tools/callTool.ts', 'src/tools/registry.ts', 'src/tools/automationTools.ts'], why: 'an automation\'s action is validated as a tool call' },
  { from: 'src/app/services.ts', to: ['src/http/rateLimit.ts', 'src/http/appDeps.ts', 'src/tools/toolPort.ts'], why: 'the composition root builds the front doors\' AppDeps and rate-limit store, and the actors\' tool port' },
  // Front doors.
  { from: 'src/http/app.ts', to: ['src/mcp/mcpRoutes.ts'], why: 'the koa app mounts the MCP routes (src/mcp uses src/http\'s middleware)' },
  { from: 'src/http/openapi.ts', to: ['src/mcp/mcpRoutes.ts'], why: 'the OpenAPI document names MCP\'s call body' },
  { from: 'src/http/accountEventStream.ts', to: ['src/adapters/db/accountEvents.store.ts'], why: 'the event store\'s row type (type only)' },
  { from: 'src/http/middleware/idempotency.ts', to: ['src/adapters/db/idempotency.store.ts'], why: 'the idempotency store\'s port type (type only)' },
  { from: 'src/mcp/mcpIdempotency.ts', to: ['src/adapters/db/idempotency.store.ts'], why: 'the idempotency store\'s port type (type only)' },
  { from: 'src/http/actorEvents.ts', to: ['src/actors/runtime/index.ts'], why: 'the runtime\'s event types for Server-Sent Events (type only)' },
]

/** The number of excepted imports (file to file): it may only go down. */
export const LAYER_EXCEPTIONS_AT_MOST = 46

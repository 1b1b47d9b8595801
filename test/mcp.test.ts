import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client'
import { apiClient, startTestApp, type Api, type TestApp } from './support/app.ts'

let app: TestApp
let api: Api
let apiKey: string
let accountId: string
let agentId: string
let readKey: string
const logLines: string[] = []

type ToolResult = { isError?: boolean; content: Array<{ type: string; text?: string }>; structuredContent?: any }

/** The two official clients, each behind the same small face. */
type McpClient = {
  listTools(): Promise<Array<{ name: string; description?: string; inputSchema: any; annotations?: any }>>
  callTool(name: string, args: Record<string, unknown>): Promise<ToolResult>
  readResource(uri: string): Promise<any>
  close(): Promise<void>
}

async function connectV1(key: string): Promise<McpClient> {
  const client = new ClientV1({ name: 'test-v1', version: '1.0.0' })
  await client.connect(new TransportV1(new URL(`${app.url}/api/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }))
  return {
    listTools: async () => (await client.listTools()).tools,
    callTool: async (name, args) => (await client.callTool({ name, arguments: args })) as ToolResult,
    readResource: async (uri) => JSON.parse(((await client.readResource({ uri })).contents[0] as { text: string }).text),
    close: () => client.close(),
  }
}

/** The v2 client; `modern` pins the 2026-07-28 revision (the client's default is the 2025 handshake). */
async function connectV2(key: string, { modern = false } = {}): Promise<McpClient> {
  const client = new ClientV2({ name: 'test-v2', version: '2.0.0' }, modern ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {})
  await client.connect(new TransportV2(new URL(`${app.url}/api/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }))
  return {
    listTools: async () => (await client.listTools()).tools,
    callTool: async (name, args) => (await client.callTool({ name, arguments: args })) as ToolResult,
    readResource: async (uri) => JSON.parse(((await client.readResource({ uri })).contents[0] as { text: string }).text),
    close: () => client.close(),
  }
}

const chainTxCount = async () =>
  (await app.services.pool.query(`select count(*)::int as n from chain_tx where agent_id = $1`, [agentId])).rows[0].n as number

/** The JSON a tool result carries as text (what a model reads), which must equal its structured content. */
function payload(result: ToolResult): any {
  const text = result.content.find((c) => c.type === 'text')?.text
  const parsed = JSON.parse(text ?? 'null')
  expect(result.structuredContent).toEqual(parsed)
  return parsed
}

beforeAll(async () => {
  app = await startTestApp({ LOG_LEVEL: 'info' }, { withChain: true, logLines })
  ;({ api, apiKey, accountId } = await app.account())
  const agent = await api('POST', '/agents', { name: 'mcp-agent', skills: ['trading'] })
  agentId = agent.body.id
  expect((await api('POST', '/dev/faucet', { agentId, eth: '5' })).status).toBe(200)
  const key = await api('POST', '/keys', { name: 'reader', scopes: ['read'] })
  readKey = key.body.key
})
afterAll(async () => {
  await app?.close()
})

describe.each([
  ['v1 (@modelcontextprotocol/sdk)', connectV1],
  ['v2 (@modelcontextprotocol/client)', (key: string) => connectV2(key)],
  ['v2 on the 2026-07-28 revision', (key: string) => connectV2(key, { modern: true })],
])('the MCP server with the %s client', (label, connect) => {
  it('lists the tools with schemas and annotations, and reads the agent', async () => {
    const client = await connect(apiKey)
    try {
      const tools = await client.listTools()
      const byName = new Map(tools.map((t) => [t.name, t]))
      expect([...byName.keys()]).toEqual(expect.arrayContaining(['get_agent', 'swap_quote', 'swap_execute', 'list_agents', 'get_balance', 'get_transactions', 'get_model_catalog']))
      const execute = byName.get('swap_execute')!
      expect(execute.annotations).toMatchObject({ destructiveHint: true })
      expect(Object.keys(execute.inputSchema.properties)).toEqual(expect.arrayContaining(['tokenIn', 'amountIn', 'agent_id', 'confirm', 'idempotencyKey']))
      expect(byName.get('get_agent')!.annotations).toMatchObject({ readOnlyHint: true })
      expect(byName.get('list_agents')!.inputSchema.properties).not.toHaveProperty('agent_id')

      const got = await client.callTool('get_agent', {})
      expect(got.isError).toBeFalsy()
      expect(payload(got)).toMatchObject({ id: agentId, name: 'mcp-agent', walletAddress: expect.stringMatching(/^0x/) })
      const listed = payload(await client.callTool('list_agents', { limit: 5 }))
      expect(listed).toMatchObject({ agents: [{ id: agentId }], nextCursor: null })
      expect(payload(await client.callTool('get_balance', {}))).toMatchObject({ credits: expect.any(Number), creditsPerUsd: 1000 })
      const models = await client.readResource('alts://models')
      expect(models.models.some((m: { default: boolean }) => m.default)).toBe(true)
      expect((await client.readResource('alts://account')).credits).toMatchObject({ credits: expect.any(Number) })
      expect((await client.readResource('alts://agents')).agents[0].id).toBe(agentId)
    } finally {
      await client.close()
    }
  })

  it('previews swap_execute without confirm (nothing sent) and swaps once on chain with confirm: true', async () => {
    const client = await connect(apiKey)
    try {
      const before = await chainTxCount()
      const preview = await client.callTool('swap_execute', { tokenIn: 'ETH', tokenOut: 'USDC', amountIn: '0.01' })
      expect(preview.isError).toBeFalsy()
      expect(payload(preview)).toMatchObject({ quoteId: expect.stringMatching(/^[0-9a-f-]{36}$/), amountOut: expect.any(String) })
      expect(await chainTxCount()).toBe(before)

      const idempotencyKey = `swap-${label.slice(0, 2)}-${Date.now()}`
      const args = { tokenIn: 'ETH', tokenOut: 'USDC', amountIn: '0.01', confirm: true, idempotencyKey }
      const done = await client.callTool('swap_execute', args)
      expect(done.isError).toBeFalsy()
      const swap = payload(done)
      expect(swap).toMatchObject({ status: 'confirmed', txHash: expect.stringMatching(/^0x[0-9a-f]{64}$/) })
      expect(await chainTxCount()).toBe(before + 1)
      const receipt = await app.services.chain!.publicClient.getTransactionReceipt({ hash: swap.txHash })
      expect(receipt.status).toBe('success')

      // The same idempotency key: the first swap answers again, nothing new is sent.
      expect(payload(await client.callTool('swap_execute', args)).id).toBe(swap.id)
      expect(await chainTxCount()).toBe(before + 1)
    } finally {
      await client.close()
    }
  })

  it('answers refusals as isError results with the API code and every bad field', async () => {
    const client = await connect(apiKey)
    try {
      const other = await client.callTool('get_agent', { agent_id: '00000000-0000-4000-8000-000000000000' })
      expect(other.isError).toBe(true)
      expect(payload(other)).toEqual({ error: 'Agent not found.', code: 'not_found' })

      const bad = await client.callTool('swap_execute', { tokenIn: 'ETH', amountIn: 'lots', extra: 1, confirm: 'yes' })
      expect(bad.isError).toBe(true)
      const body = payload(bad)
      expect(body.code).toBe('validation_failed')
      expect(Object.keys(body.field_errors).sort()).toEqual(['amountIn', 'confirm', 'extra', 'tokenOut'])
    } finally {
      await client.close()
    }
  })

  it('is refused without a key and with a deleted key', async () => {
    await expect(connect('')).rejects.toThrow()
    const made = await api('POST', '/keys', { name: `doomed-${label.slice(0, 2)}`, scopes: ['read', 'trade'] })
    const client = await connect(made.body.key)
    expect((await client.listTools()).length).toBeGreaterThan(0)
    await client.close()
    expect((await api('DELETE', `/keys/${made.body.id}`)).status).toBe(200)
    await expect(connect(made.body.key)).rejects.toThrow()
  })

  it('shows a read-scoped key no fund-moving tool, and refuses it one', async () => {
    const client = await connect(readKey)
    try {
      const names = (await client.listTools()).map((t) => t.name)
      expect(names).toContain('get_agent')
      expect(names).not.toContain('swap_execute')
      expect(names).not.toContain('swap_quote')
      // Not registered for this key: the server answers the protocol's unknown-tool error, and nothing is sent.
      const before = await chainTxCount()
      await expect(client.callTool('swap_execute', { tokenIn: 'ETH', tokenOut: 'USDC', amountIn: '0.01', confirm: true })).rejects.toThrow(/swap_execute not found/)
      expect(await chainTxCount()).toBe(before)
    } finally {
      await client.close()
    }
  })
})

describe('the tool server over plain HTTP', () => {
  const mcpApi = (key?: string) => apiClient(`${app?.url}/api/mcp`, key)

  it('answers 401 with a Bearer challenge without a key, with a bad one and with a session-less cookie', async () => {
    const none = await mcpApi()('GET', '/tools')
    expect(none.status).toBe(401)
    expect(none.body.code).toBe('unauthorized')
    expect(none.headers.get('www-authenticate')).toMatch(/^Bearer realm="mcp"/)
    const bad = await mcpApi('cpk_notakey')('POST', '', { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { accept: 'application/json, text/event-stream' })
    expect(bad.status).toBe(401)
    expect(bad.headers.get('www-authenticate')).toContain('error="invalid_token"')
    expect(bad.headers.get('x-request-id')).toBeTruthy()
  })

  it('lists the same tools as the transport, and calls them with the same results', async () => {
    const client = await connectV2(apiKey, { modern: true })
    try {
      const viaTransport = await client.listTools()
      const listed = await mcpApi(apiKey)('GET', '/tools')
      expect(listed.status).toBe(200)
      expect(listed.body.meta.requestId).toBeTruthy()
      expect(listed.body.tools.map((t: { name: string }) => t.name)).toEqual(viaTransport.map((t) => t.name))
      for (const t of listed.body.tools) {
        const same = viaTransport.find((v) => v.name === t.name)!
        expect(t.inputSchema).toEqual(same.inputSchema)
        expect(t.description).toBe(same.description)
      }
      const readList = await mcpApi(readKey)('GET', '/tools')
      expect(readList.body.tools.map((t: { name: string }) => t.name)).not.toContain('swap_execute')

      const called = await mcpApi(apiKey)('POST', '/call', { name: 'get_agent', arguments: {} })
      expect(called.status).toBe(200)
      expect(called.body.result).toEqual(payload(await client.callTool('get_agent', {})))

      const before = await chainTxCount()
      const preview = await mcpApi(apiKey)('POST', '/call', { name: 'swap_execute', arguments: { tokenIn: 'ETH', tokenOut: 'USDC', amountIn: '0.01' } })
      expect(preview.status).toBe(200)
      expect(preview.body.result.quoteId).toMatch(/^[0-9a-f-]{36}$/)
      expect(await chainTxCount()).toBe(before)

      const other = await mcpApi(apiKey)('POST', '/call', { name: 'get_agent', arguments: { agent_id: '00000000-0000-4000-8000-000000000000' } })
      expect(other.status).toBe(404)
      expect(other.body).toEqual(payload(await client.callTool('get_agent', { agent_id: '00000000-0000-4000-8000-000000000000' })))

      const bad = await mcpApi(apiKey)('POST', '/call', { name: 'swap_quote', arguments: { tokenIn: 'ETH', amountIn: 'lots' } })
      expect(bad.status).toBe(422)
      expect(Object.keys(bad.body.field_errors).sort()).toEqual(['amountIn', 'tokenOut'])
    } finally {
      await client.close()
    }
  })

  it('refuses a read key on a fund-moving tool with 403, an unknown tool with 404 and a bad body with 422', async () => {
    const before = await chainTxCount()
    const refused = await mcpApi(readKey)('POST', '/call', { name: 'swap_execute', arguments: { tokenIn: 'ETH', tokenOut: 'USDC', amountIn: '0.01', confirm: true } })
    expect(refused.status).toBe(403)
    expect(refused.body.code).toBe('forbidden')
    expect(await chainTxCount()).toBe(before)
    const unknown = await mcpApi(apiKey)('POST', '/call', { name: 'no_such_tool', arguments: {} })
    expect(unknown).toMatchObject({ status: 404, body: { code: 'not_found' } })
    const body = await mcpApi(apiKey)('POST', '/call', { tool: 'get_agent' })
    expect(body.status).toBe(422)
    expect(Object.keys(body.body.field_errors).sort()).toEqual(['name', 'tool'])
  })

  it('counts tool calls against the key rate limit of the API', async () => {
    const res = await mcpApi(apiKey)('POST', '/call', { name: 'get_balance', arguments: {} })
    expect(res.status).toBe(200)
    expect(res.headers.get('ratelimit-policy')).toMatch(/"key";q=\d+/)
    expect(res.body.result.creditsPerUsd).toBe(1000)
  })

  it('writes every tool call to the request log with its request id, and no key', async () => {
    const requestId = `mcp-log-${Date.now()}`
    await mcpApi(apiKey)('POST', '/call', { name: 'get_agent', arguments: {} }, { 'x-request-id': requestId })
    const client = await connectV2(apiKey)
    await client.callTool('get_model_catalog', {})
    await client.close()
    const calls = logLines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'tool call')
    expect(calls.find((l) => l.requestId === requestId)).toMatchObject({ tool: 'get_agent', via: 'http', status: 200, accountId })
    expect(calls.find((l) => l.tool === 'get_model_catalog' && l.via === 'mcp')).toMatchObject({ status: 200, requestId: expect.any(String) })
    expect(calls.filter((l) => l.tool === 'swap_execute' && l.confirm === true && l.status === 200).length).toBeGreaterThanOrEqual(2)
    expect(logLines.join('\n')).not.toContain(apiKey)
  })
})

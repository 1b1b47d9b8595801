import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Client } from '@modelcontextprotocol/client'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { apiClient, startTestApp, type Api, type TestApp } from './support/app.ts'
import { startModelServer, type ModelServer } from './support/modelServer.ts'

let model: ModelServer
let app: TestApp
let owner: Api
let accountId: string
let adminKey: string
let adminKeyId: string
let tradeKey: string
let tradeKeyId: string

const q = async (sql: string, values: unknown[] = []) => (await app.services.pool.query(sql, values)).rows
/** POST /api/mcp/call with a key. */
const call = (key: string, name: string, args: Record<string, unknown> = {}) => apiClient(`${app.url}/api`, key)('POST', '/mcp/call', { name, arguments: args })

beforeAll(async () => {
  model = await startModelServer()
  app = await startTestApp({ OPENAI_BASE_URL: model.baseUrl, OPENAI_API_KEY: 'test-key', WHITELIST_HOLD_SECONDS: '3600' }, { withChain: true })
  ;({ api: owner, apiKey: adminKey, accountId } = await app.account())
  adminKeyId = (await owner('GET', '/keys')).body.keys[0].id
  const trade = await owner('POST', '/keys', { name: 'trader', scopes: ['read', 'trade'] })
  tradeKey = trade.body.key
  tradeKeyId = trade.body.id
})
afterAll(async () => {
  await app?.close()
  await model?.stop()
})

describe('the agent, chat and skill tools over MCP', () => {
  let agentId: string

  it('create_agent makes an agent as POST /agents does; update_agent renames it and records the key and tool', async () => {
    const created = await call(tradeKey, 'create_agent', { name: '  tool-made ', strategy: 'momentum', policy: { max_trade_usd: '25' } })
    expect(created.status, JSON.stringify(created.body)).toBe(200)
    agentId = created.body.result.id
    expect(created.body.result).toMatchObject({ name: 'tool-made', strategy: 'momentum', policy: { maxTradeUsd: '25' }, walletAddress: expect.stringMatching(/^0x[0-9a-f]{40}$/) })
    const [row] = await q('select account_id, name from agent where id = $1', [agentId])
    expect(row).toEqual({ account_id: accountId, name: 'tool-made' })

    // The catalogs are checked as on the route: every bad field is named.
    const bad = await call(tradeKey, 'create_agent', { name: 'x', model: 'no-such-model', skills: ['nope-skill'], run_interval_seconds: 5 })
    expect(bad.status).toBe(422)
    expect(bad.body.code).toBe('validation_failed')
    expect(Object.keys(bad.body.field_errors).sort()).toEqual(['model', 'run_interval_seconds', 'skills.0'])

    const renamed = await call(tradeKey, 'update_agent', { agent_id: agentId, name: 'renamed-by-tool' })
    expect(renamed.status, JSON.stringify(renamed.body)).toBe(200)
    expect(renamed.body.result).toMatchObject({ id: agentId, name: 'renamed-by-tool' })
    expect((await owner('GET', `/agents/${agentId}`)).body.name).toBe('renamed-by-tool')
  })

  it('update_agent of the policy or payout wallet: forbidden with a trade key, held with an admin key', async () => {
    const before = await q('select policy, payout_wallet, name from agent where id = $1', [agentId])
    for (const args of [{ policy: { max_trade_usd: '5000' } }, { payout_wallet: '0x00000000000000000000000000000000000000aa' }, { name: 'n', policy: {} }]) {
      const res = await call(tradeKey, 'update_agent', { agent_id: agentId, ...args })
      expect({ args, status: res.status, code: res.body.code }).toEqual({ args, status: 403, code: 'forbidden' })
    }
    expect(await q('select policy, payout_wallet, name from agent where id = $1', [agentId])).toEqual(before)
    expect(await q(`select * from agent_pending_change where agent_id = $1`, [agentId])).toEqual([])

    const res = await call(adminKey, 'update_agent', { agent_id: agentId, policy: { max_trade_usd: '5000', max_daily_usd: '20' } })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    // Tightening applies at once; loosening waits for the hold.
    expect(res.body.result.policy).toMatchObject({ maxTradeUsd: '25', maxDailyUsd: '20' })
    expect(res.body.result.pendingChanges).toEqual([{ changes: { maxTradeUsd: '5000' }, effectiveAt: expect.any(String) }])
    const audit = await owner('GET', `/agents/${agentId}/audit`)
    expect(audit.body.entries[0]).toMatchObject({ action: 'policy.change', actor: { type: 'key', keyId: adminKeyId, tool: 'update_agent' } })
    expect(audit.body.entries.some((e: { actor: { keyId: string } }) => e.actor.keyId === tradeKeyId)).toBe(false)
  })

  it('chat_with_agent answers the turn against the scripted model, and get_chat_history lists it', async () => {
    model.mock.on({ userMessage: 'hello tool', hasToolResult: false }, { content: 'Hello from the agent.', usage: { prompt_tokens: 50, completion_tokens: 5 } })
    const res = await call(tradeKey, 'chat_with_agent', { agent_id: agentId, message: 'hello tool' })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body.result).toMatchObject({ role: 'assistant', content: 'Hello from the agent.', status: 'completed' })

    const history = await call(tradeKey, 'get_chat_history', { agent_id: agentId, limit: 2 })
    expect(history.status, JSON.stringify(history.body)).toBe(200)
    expect(history.body.result.messages.map((m: { role: string; content: string }) => [m.role, m.content])).toEqual([
      ['assistant', 'Hello from the agent.'],
      ['user', 'hello tool'],
    ])
    // A model never sees them, whatever its skills: no skill may grant them.
    const skill = await call(tradeKey, 'create_custom_skill', { slug: 'talker', name: 'Talker', instructions: 'Talk.', tools: ['chat_with_agent', 'get_chat_history'] })
    expect(skill.status).toBe(422)
    expect(Object.keys(skill.body.field_errors).sort()).toEqual(['tools.0', 'tools.1'])
  })

  it('create_custom_skill and list_custom_skills, through the official MCP client', async () => {
    const client = new Client({ name: 'skills-test', version: '1.0.0' })
    await client.connect(new StreamableHTTPClientTransport(new URL(`${app.url}/api/mcp`), { requestInit: { headers: { authorization: `Bearer ${tradeKey}` } } }))
    try {
      const names = (await client.listTools()).tools.map((t) => t.name)
      expect(names).toEqual(expect.arrayContaining(['create_agent', 'update_agent', 'chat_with_agent', 'get_chat_history', 'list_custom_skills', 'create_custom_skill']))
      const created = (await client.callTool({ name: 'create_custom_skill', arguments: { slug: 'dip-buyer', name: 'Dip buyer', instructions: 'Buy dips.', tools: ['swap_quote'] } })) as any
      expect(created.isError, JSON.stringify(created.structuredContent)).toBeFalsy()
      expect(created.structuredContent).toMatchObject({ slug: 'dip-buyer', tools: ['swap_quote'], isPublic: false })
      const [row] = await q('select slug from custom_skill where account_id = $1', [accountId])
      expect(row).toEqual({ slug: 'dip-buyer' })
      const listed = (await client.callTool({ name: 'list_custom_skills', arguments: {} })) as any
      expect(listed.structuredContent).toMatchObject({ skills: [{ slug: 'dip-buyer' }], nextCursor: null })
      const bad = (await client.callTool({ name: 'create_custom_skill', arguments: { slug: 'Bad Slug', name: '', instructions: 'y' } })) as any
      expect(bad.isError).toBe(true)
      expect(bad.structuredContent.code).toBe('validation_failed')
      expect(Object.keys(bad.structuredContent.field_errors).sort()).toEqual(['name', 'slug'])
    } finally {
      await client.close()
    }
  })

  it('the same idempotencyKey with other arguments is refused with 422 idempotency_key_reused; the same call answers again', async () => {
    expect((await owner('POST', '/dev/faucet', { agentId, eth: '2' })).status).toBe(200)
    const sent = async () => (await q('select count(*)::int as n from chain_tx where agent_id = $1', [agentId]))[0].n as number
    const before = await sent()
    const swap = { agent_id: agentId, tokenIn: 'ETH', tokenOut: 'USDC', amountIn: '0.001', confirm: true, idempotencyKey: 'mcp-key-1' }
    // Arguments that do not parse claim nothing: the corrected call may use the key.
    const malformed = await call(tradeKey, 'swap_execute', { ...swap, amountIn: 'lots' })
    expect(malformed.status).toBe(422)
    expect(malformed.body.code).toBe('validation_failed')
    const first = await call(tradeKey, 'swap_execute', swap)
    expect(first.status, JSON.stringify(first.body)).toBe(200)
    expect(await sent()).toBe(before + 1)
    const again = await call(tradeKey, 'swap_execute', swap)
    expect(again.status).toBe(200)
    expect(again.body.result.id).toBe(first.body.result.id)
    const reused = await call(tradeKey, 'swap_execute', { ...swap, amountIn: '0.002' })
    expect(reused.status).toBe(422)
    expect(reused.body.code).toBe('idempotency_key_reused')
    expect(await sent()).toBe(before + 1)
  })
})

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type Api, type TestApp } from './support/app.ts'
import { callTool, toolJsonSchema } from '../src/tools/callTool.ts'
import { findTool, toolsFor, TOOL_NAMES, TOOLS } from '../src/tools/registry.ts'
import { grantedTools } from '../src/domain/skills/builtinSkills.ts'

let app: TestApp
let api: Api
let accountId: string
let agentId: string

beforeAll(async () => {
  app = await startTestApp({}, { withChain: true })
  ;({ api, accountId } = await app.account())
  const a = await api('POST', '/agents', { name: 'tooled', skills: ['trading'] })
  agentId = a.body.id
  expect((await api('POST', '/dev/faucet', { agentId, eth: '5' })).status).toBe(200)
})
afterAll(async () => {
  await app?.close()
})

const call = (name: string, args: unknown, extra: Partial<Parameters<typeof callTool>[2]> = {}) =>
  callTool(findTool(name)!, args, { core: app.services.core, accountId, agent: { bound: agentId }, callId: 'call-1', ...extra })

describe('the tool registry', () => {
  it('describes every tool with a JSON Schema that has agent_id (account-level tools have none) and no $schema', () => {
    for (const tool of TOOLS) {
      const schema = toolJsonSchema(tool)
      expect(schema.type).toBe('object')
      expect(schema).not.toHaveProperty('$schema')
      expect((schema.properties as Record<string, unknown>).agent_id !== undefined).toBe(tool.agent !== 'none')
      expect(tool.description.length).toBeGreaterThan(40)
    }
    expect(Object.keys(toolJsonSchema(findTool('swap_quote')!).properties as object)).toEqual(
      expect.arrayContaining(['tokenIn', 'tokenOut', 'amountIn', 'slippageBps']),
    )
  })

  it('lets skills grant only tools that act for the one agent', () => {
    for (const name of ['list_agents', 'get_balance', 'create_agent', 'update_agent', 'create_custom_skill', 'chat_with_agent', 'get_chat_history']) {
      expect(TOOL_NAMES.has(name), name).toBe(false)
      expect(toolsFor({ scopes: ['read', 'trade', 'admin'], granted: new Set([name]) })).toEqual([])
    }
    expect(TOOL_NAMES.has('swap_execute')).toBe(true)
  })

  it('lists tools by scope and by the skills granted', () => {
    const names = (ts: { name: string }[]) => ts.map((t) => t.name)
    expect(names(toolsFor({ scopes: ['read'] }))).not.toContain('swap_execute')
    expect(names(toolsFor({ scopes: ['read', 'trade'], granted: grantedTools([]) }))).toEqual(['get_agent', 'get_portfolio', 'get_whitelist'])
    expect(names(toolsFor({ scopes: ['read', 'trade'], granted: grantedTools(['trading']) }))).toEqual(['get_agent', 'swap_quote', 'swap_execute', 'get_portfolio', 'get_whitelist', 'get_price'])
  })

  it('executes a swap once per call id and answers the same swap to a retry', async () => {
    const first = await call('swap_execute', { tokenIn: 'ETH', tokenOut: 'USDC', amountIn: '0.01' }, { callId: 'tc-swap-1' })
    expect(first.ok).toBe(true)
    const swap = (first as { result: { id: string; status: string; txHash: string } }).result
    expect(swap.status).toBe('confirmed')
    const again = await call('swap_execute', { tokenIn: 'ETH', tokenOut: 'USDC', amountIn: '0.01' }, { callId: 'tc-swap-1' })
    expect((again as { result: { id: string } }).result.id).toBe(swap.id)
    const { rows } = await app.services.pool.query(`select count(*)::int as n from chain_tx where agent_id = $1`, [agentId])
    expect(rows[0].n).toBe(1)
  })

  it('previews a fund-moving tool without sending anything', async () => {
    const before = (await app.services.pool.query(`select count(*)::int as n from chain_tx where agent_id = $1`, [agentId])).rows[0].n
    const preview = await call('swap_execute', { tokenIn: 'ETH', tokenOut: 'USDC', amountIn: '0.01' }, { mode: 'preview', callId: 'tc-preview' })
    expect(preview.ok).toBe(true)
    expect((preview as { result: { quoteId: string } }).result.quoteId).toMatch(/^[0-9a-f-]{36}$/)
    const after = (await app.services.pool.query(`select count(*)::int as n from chain_tx where agent_id = $1`, [agentId])).rows[0].n
    expect(after).toBe(before)
  })

  it('refuses another agent id, bad arguments and amounts over the policy with the API codes', async () => {
    const other = await call('get_agent', { agent_id: '00000000-0000-4000-8000-000000000000' })
    expect(other).toMatchObject({ ok: false, status: 404, error: { code: 'not_found' } })
    const bad = await call('swap_quote', { tokenIn: 'ETH', amountIn: 'lots', extra: 1 })
    expect(bad).toMatchObject({ ok: false, status: 422, error: { code: 'validation_failed' } })
    expect(Object.keys((bad as { error: { fieldErrors: object } }).error.fieldErrors).sort()).toEqual(['amountIn', 'extra', 'tokenOut'])
    const over = await call('swap_execute', { tokenIn: 'ETH', tokenOut: 'USDC', amountIn: '3' }, { callId: 'tc-over' })
    expect(over).toMatchObject({ ok: false, status: 403, error: { code: 'policy_violation' } })
  })

  it('chooses the only agent of the account when agent_id is left out', async () => {
    const got = await call('get_agent', {}, { agent: 'choose' })
    expect(got).toMatchObject({ ok: true, result: { id: agentId, name: 'tooled' } })
  })

  it('calls account-level tools without an agent: lists, ledger pages, balance and catalog', async () => {
    const empty = await app.account({ name: 'no agents' })
    const onEmpty = (name: string, args: unknown) => callTool(findTool(name)!, args, { core: app.services.core, accountId: empty.accountId, agent: 'choose', callId: 'c' })
    expect(await onEmpty('list_agents', {})).toEqual({ ok: true, result: { agents: [], nextCursor: null } })
    const refused = await onEmpty('list_agents', { agent_id: agentId, limit: 0 })
    expect(Object.keys((refused as { error: { fieldErrors: object } }).error.fieldErrors).sort()).toEqual(['agent_id', 'limit'])

    await api('POST', '/agents', { name: 'second' })
    const first = await call('list_agents', { limit: 1 }, { agent: 'choose' })
    const page1 = (first as { result: { agents: { id: string }[]; nextCursor: string } }).result
    expect(page1.agents).toHaveLength(1)
    const second = await call('list_agents', { limit: 1, cursor: page1.nextCursor }, { agent: 'choose' })
    const page2 = (second as { result: { agents: { id: string }[] } }).result
    expect(page2.agents[0]!.id).not.toBe(page1.agents[0]!.id)
    expect(await call('list_agents', { cursor: 'nonsense' })).toMatchObject({ ok: false, status: 422, error: { fieldErrors: { cursor: 'Invalid cursor.' } } })

    const billing = await api('GET', '/billing')
    expect(await call('get_balance', {})).toEqual({ ok: true, result: { ...billing.body, meta: undefined } })
    const ledger = await api('GET', '/billing/transactions?kind=grant')
    const viaTool = await call('get_transactions', { kind: 'grant' })
    expect((viaTool as { result: { transactions: unknown[] } }).result.transactions).toEqual(ledger.body.transactions)
    const models = await call('get_model_catalog', {})
    expect((models as { result: { models: unknown[] } }).result.models).toEqual((await api('GET', '/models')).body.models)
  })
})

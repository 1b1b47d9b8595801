import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { apiClient, startTestApp, type Api, type TestApp } from './support/app.ts'
import { waitFor } from './support/waitFor.ts'

/**
 * The automation tools over the real MCP endpoint (POST /api/mcp/call), Postgres and anvil:
 * fund-moving ones answer a preview without `confirm: true` and create nothing; with it they
 * create through the same use case as POST /automations, once per idempotency key.
 */
let app: TestApp
let owner: Api
let accountId: string
let tradeKey: string
let readKey: string
let trader: string

const call = (key: string, name: string, args: Record<string, unknown> = {}) => apiClient(`${app.url}/api`, key)('POST', '/mcp/call', { name, arguments: args })
const dca = { name: 'hourly eth', tokenIn: 'ETH', tokenOut: 'USDC', amountPerRun: '0.001', everySeconds: 3600 }
const automationsOf = async (agentId: string) => (await owner('GET', `/automations?agent_id=${agentId}`)).body.automations as Array<{ id: string; kind: string }>

beforeAll(async () => {
  app = await startTestApp({}, { withChain: true })
  ;({ api: owner, accountId } = await app.account())
  tradeKey = (await owner('POST', '/keys', { name: 'trader', scopes: ['read', 'trade'] })).body.key
  readKey = (await owner('POST', '/keys', { name: 'reader', scopes: ['read'] })).body.key
  trader = (await owner('POST', '/agents', { name: 'dca-bot', skills: ['trading'] })).body.id
  expect((await owner('POST', '/dev/faucet', { agentId: trader, eth: '2' })).status).toBe(200)
  expect((await owner('POST', `/agents/${trader}/start`)).status).toBe(200)
})
afterAll(async () => {
  await app?.close()
})

describe('automation tools over MCP', () => {
  let dcaId: string

  it('dca_create without confirm previews and creates nothing; with confirm creates once per idempotency key', async () => {
    const preview = await call(tradeKey, 'dca_create', { agent_id: trader, ...dca })
    expect(preview.status, JSON.stringify(preview.body)).toBe(200)
    expect(preview.body.result).toMatchObject({
      created: false, agentId: trader, kind: 'dca', status: 'armed', trigger: { type: 'interval', everySeconds: 3600 },
      action: { type: 'tool_call', tool: 'swap_execute', args: { tokenIn: 'ETH', tokenOut: 'USDC', amountIn: '0.001' } },
    })
    expect(await automationsOf(trader)).toEqual([])

    const args = { agent_id: trader, ...dca, confirm: true, idempotencyKey: 'dca-tool-1' }
    const created = await call(tradeKey, 'dca_create', args)
    expect(created.status, JSON.stringify(created.body)).toBe(200)
    dcaId = created.body.result.id
    expect(created.body.result).toMatchObject({ agentId: trader, name: 'hourly eth', kind: 'dca', triggerType: 'interval', actionType: 'tool_call' })
    // A retried call with the same key finds the automation it created.
    const again = await call(tradeKey, 'dca_create', args)
    expect(again.body.result.id).toBe(dcaId)
    expect((await automationsOf(trader)).map((a) => a.id)).toEqual([dcaId])
    // The same key with other arguments is refused.
    expect((await call(tradeKey, 'dca_create', { ...args, amountPerRun: '0.002' })).body.code).toBe('idempotency_key_reused')
  })

  it('dca_list lists only DCAs; list_automations and get_automation read them; a read-only key cannot create', async () => {
    const custom = await call(tradeKey, 'create_automation', {
      agent_id: trader, name: 'later', confirm: true, idempotencyKey: 'custom-1',
      trigger: { type: 'schedule', scheduledAt: new Date(Date.now() + 3_600_000).toISOString() }, action: { type: 'tool_call', tool: 'get_portfolio', args: {} },
    })
    expect(custom.status, JSON.stringify(custom.body)).toBe(200)
    expect(custom.body.result).toMatchObject({ kind: 'custom', status: 'armed', triggerType: 'schedule' })

    const dcas = await call(readKey, 'dca_list', { agent_id: trader })
    expect(dcas.status, JSON.stringify(dcas.body)).toBe(200)
    expect(dcas.body.result.automations.map((a: { id: string }) => a.id)).toEqual([dcaId])
    const all = await call(readKey, 'list_automations', { agent_id: trader })
    expect(all.body.result.automations.map((a: { id: string }) => a.id)).toEqual([custom.body.result.id, dcaId])
    expect((await call(readKey, 'get_automation', { agent_id: trader, automation_id: dcaId })).body.result).toMatchObject({ id: dcaId, kind: 'dca' })

    const other = (await owner('POST', '/agents', { name: 'other' })).body.id
    expect((await call(readKey, 'get_automation', { agent_id: other, automation_id: dcaId })).status).toBe(404)
    for (const name of ['dca_create', 'create_automation', 'limit_order_create', 'trigger_automation', 'dca_cancel']) {
      const res = await call(readKey, name, { agent_id: trader, ...dca, confirm: true })
      expect({ name, status: res.status, code: res.body.code }).toEqual({ name, status: 403, code: 'forbidden' })
    }
    expect(await automationsOf(trader)).toHaveLength(2)
  })

  it('limit_order_create is refused with the field named when the threshold is already met, previewed or not', async () => {
    const limit = { agent_id: trader, name: 'buy eth cheap', tokenIn: 'USDC', tokenOut: 'ETH', amountIn: '5', priceUsd: '1000000', operator: 'lte' }
    for (const extra of [{}, { confirm: true, idempotencyKey: 'limit-1' }]) {
      const res = await call(tradeKey, 'limit_order_create', { ...limit, ...extra })
      expect(res.status, JSON.stringify(res.body)).toBe(422)
      expect(Object.keys(res.body.field_errors)).toEqual(['limit.priceUsd'])
    }
    // A threshold not yet met is previewed as a once-only price trigger on ETH.
    const ok = await call(tradeKey, 'limit_order_create', { ...limit, priceUsd: '0.01' })
    expect(ok.body.result).toMatchObject({ created: false, kind: 'limit', triggerOnce: true, trigger: { type: 'price_threshold', mint: 'ETH', operator: 'lte', priceUsd: '0.01' } })
    expect(await automationsOf(trader)).toHaveLength(2)
  })

  it('the protective and sliced order tools preview and create their kinds; their problems are named as written', async () => {
    const price = Number((await owner('GET', '/price?tokens=TSLAx')).body.prices[0].priceUsd)
    const stop = await call(tradeKey, 'stop_loss_create', { agent_id: trader, name: 'stop', token: 'TSLAx', priceUsd: (price * 0.9).toFixed(2), share: 0.25 })
    expect(stop.status, JSON.stringify(stop.body)).toBe(200)
    expect(stop.body.result).toMatchObject({
      created: false, kind: 'stop_loss', triggerOnce: true, trigger: { type: 'price_threshold', mint: 'TSLAx', operator: 'lte' },
      action: { type: 'tool_call', tool: 'swap_execute', args: { tokenIn: 'TSLAx', tokenOut: 'USDC' } },
    })
    const both = await call(tradeKey, 'trailing_stop_create', { agent_id: trader, name: 't', token: 'TSLAx', trailPct: 5, trailUsd: '5' })
    expect(both.status).toBe(422)
    expect(Object.keys(both.body.field_errors)).toEqual(['trailing_stop.trailPct'])
    const tooFast = await call(tradeKey, 'twap_create', { agent_id: trader, name: 'w', tokenIn: 'ETH', tokenOut: 'USDC', amountIn: '0.01', slices: 5, overSeconds: 100, maxPriceImpactBps: 50 })
    expect(tooFast.status).toBe(422)
    expect(Object.keys(tooFast.body.field_errors)).toEqual(['twap.overSeconds'])
    for (const amountIn of ['0.0000001', '0.000004']) {
      const small = await call(tradeKey, 'twap_create', { agent_id: trader, name: 'w', tokenIn: 'USDC', tokenOut: 'ETH', amountIn, slices: 5, overSeconds: 600, maxPriceImpactBps: 50 })
      expect(small.status).toBe(422)
      expect(small.body.field_errors).toEqual({ 'twap.amountIn': amountIn === '0.0000001' ? 'At most 6 decimals for USDC.' : 'Too small to split into 5 slices.' })
    }
    const twap = await call(tradeKey, 'twap_create', { agent_id: trader, name: 'w', tokenIn: 'ETH', tokenOut: 'USDC', amountIn: '0.01', slices: 5, overSeconds: 600, maxPriceImpactBps: 50 })
    expect(twap.body.result).toMatchObject({ created: false, kind: 'twap', trigger: { type: 'interval', everySeconds: 120, maxRuns: 5 } })
    const bracket = await call(tradeKey, 'bracket_create', {
      agent_id: trader, name: 'b', token: 'TSLAx', takeProfitUsd: (price * 1.5).toFixed(2), stopLossUsd: (price * 0.5).toFixed(2), confirm: true, idempotencyKey: 'bracket-1',
    })
    expect(bracket.status, JSON.stringify(bracket.body)).toBe(200)
    expect(bracket.body.result).toMatchObject({ kind: 'bracket', status: 'armed', share: 1, takeProfit: { status: 'waiting' }, stopLoss: { status: 'waiting' } })
    // A mirror: previewed with its leader; one of the agent itself is refused (mirror_cycle).
    const leader = (await owner('POST', '/agents', { name: 'leader', skills: ['trading'] })).body.id
    const copy = { agent_id: trader, name: 'm', ratio: 0.5, maxPerTradeUsd: '10', maxDelaySeconds: 60 }
    const mirror = await call(tradeKey, 'mirror_create', { ...copy, leaderAgentId: leader })
    expect(mirror.body.result).toMatchObject({ created: false, kind: 'mirror', trigger: { type: 'leader_swap', leaderAgentId: leader }, action: { type: 'tool_call', tool: 'swap_execute' } })
    const self = await call(tradeKey, 'mirror_create', { ...copy, leaderAgentId: trader })
    expect([self.status, self.body.code]).toEqual([422, 'mirror_cycle'])
    // Its trigger and action are its kind's: a PATCH of them is refused; a rename is not.
    const patched = await owner('PATCH', `/automations/${bracket.body.result.id}`, { trigger: { type: 'price_threshold', mint: 'TSLAx', operator: 'gte', priceUsd: '1' }, trigger_once: false })
    expect(patched.status).toBe(422)
    expect(Object.keys(patched.body.field_errors)).toEqual(['trigger', 'trigger_once'])
    expect((await owner('PATCH', `/automations/${bracket.body.result.id}`, { name: 'renamed' })).body).toMatchObject({ name: 'renamed', kind: 'bracket' })
    expect((await call(tradeKey, 'delete_automation', { agent_id: trader, automation_id: bracket.body.result.id })).body.result).toMatchObject({
      status: 'cancelled', takeProfit: { status: 'cancelled' }, stopLoss: { status: 'cancelled' },
    })
  })

  it('only the sniper skill grants a model automation tools; an automation tool is never an automation action', async () => {
    const tools = (skills: string[]) => app.services.core.agentTools({ accountId, skills })
    expect(await tools(['sniper'])).toEqual(expect.arrayContaining(['list_automations', 'create_automation']))
    expect((await tools(['trading', 'market-intelligence', 'wallet', 'token-launch'])).filter((t) => /automation|dca_|limit_order/.test(t))).toEqual([])
    const sniper = (await owner('POST', '/agents', { name: 'sniper', skills: ['sniper', 'trading'] })).body.id
    const res = await call(tradeKey, 'create_automation', {
      agent_id: sniper, name: 'recursive', trigger: { type: 'interval', everySeconds: 3600 }, action: { type: 'tool_call', tool: 'list_automations', args: {} },
    })
    expect(res.status, JSON.stringify(res.body)).toBe(422)
    expect(Object.keys(res.body.field_errors)).toEqual(['action.tool'])
  })

  it('trigger_automation previews, then fires once more; dca_cancel cancels only a DCA', async () => {
    // The DCA fired at creation (a swap on chain); the trigger fires a second one.
    await waitFor(async () => (await owner('GET', `/automations/${dcaId}`)).body.runCount === 1, 30_000)
    const preview = await call(tradeKey, 'trigger_automation', { agent_id: trader, automation_id: dcaId })
    expect(preview.body.result).toMatchObject({ triggered: false, automation: { id: dcaId, runCount: 1 }, action: { tool: 'swap_execute' } })
    const fired = await call(tradeKey, 'trigger_automation', { agent_id: trader, automation_id: dcaId, confirm: true, idempotencyKey: 'trigger-1' })
    expect(fired.status, JSON.stringify(fired.body)).toBe(200)
    let a: any
    await waitFor(async () => (a = (await owner('GET', `/automations/${dcaId}`)).body).runCount === 2 && a.status === 'armed', 30_000)
    expect(a.firings.map((f: { number: number; source: string; outcome: string }) => [f.number, f.source, f.outcome])).toEqual([[2, 'manual', 'ok'], [1, 'timer', 'ok']])
    expect(a.firings.every((f: { txHash: string | null }) => /^0x[0-9a-f]{64}$/.test(f.txHash ?? ''))).toBe(true)

    const custom = (await automationsOf(trader)).find((x) => x.kind === 'custom')!
    const wrong = await call(tradeKey, 'dca_cancel', { agent_id: trader, automation_id: custom.id })
    expect(wrong.status).toBe(422)
    expect(Object.keys(wrong.body.field_errors)).toEqual(['automation_id'])
    const cancelled = await call(tradeKey, 'dca_cancel', { agent_id: trader, automation_id: dcaId })
    expect(cancelled.body.result).toMatchObject({ id: dcaId, status: 'cancelled' })
    expect((await call(tradeKey, 'trigger_automation', { agent_id: trader, automation_id: dcaId })).status).toBe(409)
    expect((await call(tradeKey, 'delete_automation', { agent_id: trader, automation_id: custom.id })).body.result).toMatchObject({ status: 'cancelled' })
  })
})

describe('the OpenAPI document', () => {
  it('declares the automation routes with the Automation response', async () => {
    const doc = (await apiClient(`${app.url}/api/v1`)('GET', '/openapi.json')).body
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/automations'))).toEqual(['/automations', '/automations/{id}', '/automations/{id}/events', '/automations/{id}/trigger', '/automations/{id}/hook/rotate'])
    expect(Object.keys(doc.paths['/automations/{id}'])).toEqual(['get', 'patch', 'delete'])
    expect(doc.paths['/automations'].get.parameters.map((p: { name: string }) => p.name)).toEqual(expect.arrayContaining(['agent_id', 'status', 'kind', 'cursor']))
    expect(doc.paths['/automations'].post.requestBody.content['application/json'].schema.properties).toHaveProperty('dca')
    expect(Object.keys(doc.components.schemas.Automation.properties)).toEqual([
      'id', 'agentId', 'name', 'description', 'kind', 'trigger', 'action', 'status', 'triggerType', 'actionType', 'triggerOnce', 'catchUp', 'maxFirings',
      'maxSpendUsd', 'runCount', 'lastTriggeredAt', 'nextRunAt', 'suspended', 'lastError', 'completedReason', 'firings', 'createdAt', 'updatedAt',
      // What a protective or sliced order waits for: only on those kinds.
      'share', 'level', 'high', 'trailPct', 'trailUsd', 'takeProfit', 'stopLoss', 'slices', 'slicesDone', 'slicesLeft', 'amountIn', 'maxPriceImpactBps',
      // A mirror's parameters and the leader swap it last served.
      'leaderAgentId', 'ratio', 'maxPerTradeUsd', 'tokens', 'maxDelaySeconds', 'lastLeaderSwap',
    ])
    // A created automation (not an order) has exactly the declared fields that are always there.
    const automations = (await owner('GET', '/automations')).body.automations as Array<Record<string, unknown>>
    const a = automations.find((x) => x.kind === 'dca')!
    expect(Object.keys(a).sort()).toEqual([...doc.components.schemas.Automation.required].sort())
    // A bracket adds what it waits for, each declared.
    const bracket = automations.find((x) => x.kind === 'bracket')!
    expect(Object.keys(bracket).filter((k) => !(k in a)).sort()).toEqual(['share', 'stopLoss', 'takeProfit'])
    for (const k of Object.keys(bracket)) expect(doc.components.schemas.Automation.properties).toHaveProperty(k)
  })
})

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { apiClient, startTestApp, type Api, type TestApp } from './support/app.ts'
import { startModelServer, type ModelServer } from './support/modelServer.ts'
import { waitFor } from './support/waitFor.ts'

/**
 * A listed agent moves no funds, whoever asks: HTTP, MCP (plain calls and the MCP transport), a
 * run already going when it was listed, an automation firing while it is listed; cancelling the
 * listing gives the agent back, stopped, and it trades again.
 */
let app: TestApp
let model: ModelServer
let seller: { accountId: string; apiKey: string; api: Api }
const friend = '0x00000000000000000000000000000000000f00d3'

beforeAll(async () => {
  model = await startModelServer()
  app = await startTestApp({ STARTER_CREDITS: '10000', OPENAI_BASE_URL: model.baseUrl, OPENAI_API_KEY: 'test-key', WHITELIST_HOLD_SECONDS: '0' }, { withChain: true })
  seller = await app.account({ name: 'lister' })
})
afterAll(async () => {
  await app?.close()
  await model?.stop()
})

async function fundedAgent(name: string) {
  const agent = (await seller.api('POST', '/agents', { name, model: 'gpt-4o-mini', skills: ['trading', 'wallet'] })).body as { id: string }
  expect((await seller.api('POST', '/dev/faucet', { agentId: agent.id, eth: '2', usdc: '500' })).status).toBe(200)
  expect((await seller.api('POST', `/agents/${agent.id}/whitelist`, { address: friend })).status).toBe(201)
  return agent.id
}
const list = async (agentId: string) => {
  const res = await seller.api('POST', '/market', { agentId, priceCredits: 300 })
  expect(res.status).toBe(201)
  return res.body.id as string
}
const walletOps = async (agentId: string) => (await app.services.pool.query('select count(*)::int as n from wallet_op where agent_id = $1', [agentId])).rows[0].n as number

/** Cancels the listing: the agent is `stopped` again, starts, and swaps. */
async function cancelRestores(agentId: string, listingId: string) {
  expect((await seller.api('DELETE', `/market/${listingId}`)).body.status).toBe('cancelled')
  expect((await seller.api('GET', `/agents/${agentId}`)).body).toMatchObject({ status: 'stopped', statusReason: null })
  expect((await seller.api('POST', `/agents/${agentId}/start`)).body.status).toBe('running')
  const swap = await seller.api('POST', '/swap/execute', { agentId, tokenIn: 'USDC', tokenOut: 'ETH', amountIn: '10', slippageBps: 300 })
  expect({ status: swap.status, swap: swap.body.status }).toEqual({ status: 200, swap: 'confirmed' })
}

describe('a listed agent refuses every fund-moving call', () => {
  it('over HTTP and MCP (plain calls and the transport): 409 invalid_state naming the listing; a cancel restores it', async () => {
    const agentId = await fundedAgent('listed everywhere')
    const listingId = await list(agentId)
    const http: Array<[string, unknown, Record<string, string>?]> = [
      ['/swap/execute', { agentId, tokenIn: 'USDC', tokenOut: 'ETH', amountIn: '1', slippageBps: 100 }],
      ['/wallet/transfer', { agentId, to: friend, token: 'USDC', amount: '1' }],
      ['/fees/claim', { agentId }],
      ['/launch/venue-a', { agentId, symbol: 'LST', name: 'Listed', description: 'x', logoUrl: 'https://example.com/x.png', quote: 'ETH' }, { 'idempotency-key': 'lst-1' }],
      ['/launch/self-funded', { agentId, symbol: 'LSF', name: 'Listed', description: 'x', logoUrl: 'https://example.com/x.png', quote: 'ETH', seedAmount: '0.1' }, { 'idempotency-key': 'lst-2' }],
      [`/agents/${agentId}/runs`, { goal: 'trade' }],
      [`/agents/${agentId}/start`, undefined],
      [`/agents/${agentId}/stop`, undefined],
    ]
    for (const [path, body, headers] of http) {
      const res = await seller.api('POST', path, body, headers)
      expect({ path, status: res.status, code: res.body.code, names: String(res.body.error).includes(listingId) }).toEqual({ path, status: 409, code: 'invalid_state', names: true })
    }
    const tools: Array<[string, Record<string, unknown>]> = [
      ['swap_execute', { agent_id: agentId, tokenIn: 'USDC', tokenOut: 'ETH', amountIn: '1', confirm: true, idempotencyKey: 'l-swap' }],
      ['wallet_transfer', { agent_id: agentId, to: friend, token: 'USDC', amount: '1', confirm: true, idempotencyKey: 'l-transfer' }],
      ['claim_fees', { agent_id: agentId, confirm: true, idempotencyKey: 'l-claim' }],
      ['launch_token', { agent_id: agentId, venue: 'venue-a', symbol: 'LSU', name: 'Listed', description: 'x', logoUrl: 'https://example.com/x.png', quote: 'ETH', confirm: true, idempotencyKey: 'l-launch' }],
      ['create_agent_run', { agent_id: agentId, goal: 'trade' }],
      // A transfer's preview (no confirm) is refused too: nothing to sign for a listed agent.
      ['wallet_transfer', { agent_id: agentId, to: friend, token: 'USDC', amount: '1' }],
    ]
    const plain = apiClient(`${app.url}/api`, seller.apiKey)
    const client = new Client({ name: 'lister', version: '1.0.0' })
    await client.connect(new StreamableHTTPClientTransport(new URL(`${app.url}/api/mcp`), { requestInit: { headers: { authorization: `Bearer ${seller.apiKey}` } } }))
    try {
      for (const [name, args] of tools) {
        const res = await plain('POST', '/mcp/call', { name, arguments: args })
        expect({ name, status: res.status, code: res.body.code, names: String(res.body.error).includes(listingId) }).toEqual({ name, status: 409, code: 'invalid_state', names: true })
        const r = (await client.callTool({ name, arguments: args })) as { isError?: boolean; content: Array<{ text?: string }> }
        const body = JSON.parse(r.content[0]!.text!)
        expect({ name, isError: r.isError, code: body.code, names: String(body.error).includes(listingId) }).toEqual({ name, isError: true, code: 'invalid_state', names: true })
      }
    } finally {
      await client.close()
    }
    const deleted = await seller.api('DELETE', `/agents/${agentId}`)
    expect({ status: deleted.status, code: deleted.body.code, names: String(deleted.body.error).includes(listingId) }).toEqual({ status: 409, code: 'invalid_state', names: true })
    expect((await seller.api('GET', `/agents/${agentId}`)).body).toMatchObject({ status: 'paused', statusReason: 'listed' })
    expect(await walletOps(agentId)).toBe(0)
    expect((await app.services.pool.query('select count(*)::int as n from actor where kind = $1 and account_id = $2', ['launch', seller.accountId])).rows[0].n).toBe(0)
    await cancelRestores(agentId, listingId)
  })

  it("a run going when the agent is listed is stopped; its swap already under way is refused naming the listing, nothing moves", async () => {
    const agentId = await fundedAgent('listed mid-run')
    const goal = 'trade through the listing'
    const swap = { tokenIn: 'USDC', tokenOut: 'ETH', amountIn: '5', slippageBps: 300 }
    const quote = await seller.api('POST', '/swap/quote', { agentId, ...swap })
    expect(quote.status).toBe(200)
    model.mock.on({ userMessage: goal, hasToolResult: false }, { toolCalls: [{ id: 'call_listed', name: 'swap_execute', arguments: JSON.stringify({ ...swap, quoteId: quote.body.quoteId }) }] })
    model.mock.onToolResult('call_listed', { content: 'The agent is listed; nothing moved.' })
    // The run's swap reads the agent, then waits on its quote (this test holds the quote table) while the agent is listed.
    const holder = await app.services.pool.connect()
    let listingId = ''
    let run: Awaited<ReturnType<Api>>
    try {
      await holder.query('begin')
      await holder.query('lock table swap_quote in access exclusive mode')
      run = await seller.api('POST', `/agents/${agentId}/runs`, { goal })
      expect(run.status).toBe(202)
      await waitFor(async () => (await app.services.pool.query(`select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and query like 'select data, used_by from swap_quote%'`)).rows[0].n === 1, 20_000)
      listingId = await list(agentId)
      // The listing's pause reaches the run (its stop recorded, the swap in flight) before the swap goes on.
      await waitFor(async () => (await seller.api('GET', `/runs/${run.body.id}`)).body.stoppedInFlight !== null, 10_000)
    } finally {
      await holder.query('commit')
      holder.release()
    }
    let got: any
    await waitFor(async () => ['completed', 'stopped', 'failed'].includes((got = (await seller.api('GET', `/runs/${run.body.id}`)).body).status), 20_000)
    expect(got).toMatchObject({ status: 'stopped', stoppedInFlight: { modelCall: false, toolCalls: ['call_listed'] } })
    const [call] = got.steps[0].toolCalls
    expect(call).toMatchObject({ id: 'call_listed', name: 'swap_execute', status: 'refused', txHash: null, result: { code: 'invalid_state' } })
    expect(JSON.stringify(call.result)).toContain(listingId)
    expect(await walletOps(agentId)).toBe(0)
    await cancelRestores(agentId, listingId)
  })

  it('an automation firing while the agent is listed is recorded skipped naming the listing, sends nothing, and fires again once the listing is cancelled', async () => {
    const agentId = await fundedAgent('listed dca')
    expect((await seller.api('POST', `/agents/${agentId}/start`)).body.status).toBe('running')
    const created = await seller.api('POST', '/automations', {
      agent_id: agentId, name: 'hourly usdc to eth', kind: 'dca', dca: { tokenIn: 'USDC', tokenOut: 'ETH', amountPerRun: '2', everySeconds: 3600, slippageBps: 300 },
    })
    expect(created.status).toBe(201)
    const id = created.body.id as string
    let a: any
    const firing = async (n: number) => waitFor(async () => (a = (await seller.api('GET', `/automations/${id}`)).body).firings[0]?.number === n && a.status === 'armed', 20_000)
    await firing(1)
    expect(a.firings[0]).toMatchObject({ outcome: 'ok', txHash: expect.any(String) })
    const opsBefore = await walletOps(agentId)

    const listingId = await list(agentId)
    expect((await seller.api('POST', `/automations/${id}/trigger`)).status).toBe(200)
    await firing(2)
    expect(a).toMatchObject({ suspended: true, nextRunAt: null, runCount: 1 })
    expect(a.firings[0]).toMatchObject({ outcome: 'skipped', txHash: null, childId: null })
    expect(a.firings[0].reason).toBe(`agent_not_running: the agent is paused: listed on the market (listing ${listingId})`)
    expect(await walletOps(agentId)).toBe(opsBefore)

    await cancelRestores(agentId, listingId)
    expect((await seller.api('POST', `/automations/${id}/trigger`)).status).toBe(200)
    await firing(3)
    expect(a.firings[0]).toMatchObject({ outcome: 'ok', txHash: expect.any(String) })
    await seller.api('DELETE', `/automations/${id}`)
  })

  it('a chat tool call: the model asks for swap_execute, the tool result it reads says refused naming the listing; a run of a running agent is stopped by the listing', async () => {
    const agentId = await fundedAgent('listed chat')
    const listingId = await list(agentId)
    model.mock.on({ userMessage: 'swap while listed', hasToolResult: false }, { toolCalls: [{ id: 'call_chat_listed', name: 'swap_execute', arguments: '{"tokenIn":"USDC","tokenOut":"ETH","amountIn":"3"}' }] })
    model.mock.onToolResult('call_chat_listed', { content: 'Refused: the agent is listed.' })
    const chat = await seller.api('POST', `/agents/${agentId}/chat`, { message: 'swap while listed' })
    expect(chat.status).toBe(200)
    expect(chat.body.toolCalls).toMatchObject([{ id: 'call_chat_listed', status: 'refused', result: { code: 'invalid_state' } }])
    const asked = model.mock.getRequests().find((r) => JSON.stringify(r.body).includes('call_chat_listed') && JSON.stringify(r.body).includes('"role":"tool"'))
    const toolMessage = (asked!.body as { messages: Array<{ role: string; content: string }> }).messages.find((m) => m.role === 'tool')!
    expect(toolMessage.content).toContain('invalid_state')
    expect(toolMessage.content).toContain(listingId)
    expect(await walletOps(agentId)).toBe(0)
    expect((await seller.api('DELETE', `/market/${listingId}`)).status).toBe(200)

    // A running agent's run when the agent is listed: the listing's pause stops it; the late answer's swap is skipped.
    expect((await seller.api('POST', `/agents/${agentId}/start`)).body.status).toBe('running')
    const goal = 'run while being listed'
    let answer!: () => void
    let waiting = false
    const gate = new Promise<void>((r) => (answer = r))
    model.mock.on({ userMessage: goal, hasToolResult: false }, async () => {
      waiting = true
      await gate
      return { toolCalls: [{ id: 'call_run_listed', name: 'swap_execute', arguments: '{"tokenIn":"USDC","tokenOut":"ETH","amountIn":"5"}' }] }
    })
    const run = await seller.api('POST', `/agents/${agentId}/runs`, { goal })
    await waitFor(() => waiting, 10_000)
    let second = ''
    try {
      second = await list(agentId)
      // The listing's pause has reached the run (its stop recorded) before the model answers.
      await waitFor(async () => (await seller.api('GET', `/runs/${run.body.id}`)).body.stoppedInFlight !== null, 10_000)
    } finally {
      answer()
    }
    let got: any
    await waitFor(async () => ['completed', 'stopped', 'failed'].includes((got = (await seller.api('GET', `/runs/${run.body.id}`)).body).status), 20_000)
    expect(got).toMatchObject({ status: 'stopped', stoppedInFlight: { modelCall: true, toolCalls: [] } })
    expect(got.steps[0].toolCalls).toMatchObject([{ id: 'call_run_listed', status: 'skipped', txHash: null }])
    expect(await walletOps(agentId)).toBe(0)
    await cancelRestores(agentId, second)
  })
})

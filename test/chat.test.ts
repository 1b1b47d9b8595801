import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { startTestApp, type Api, type TestApp } from './support/app.ts'
import { startModelServer, type ModelServer } from './support/modelServer.ts'

let model: ModelServer
let app: TestApp
let api: Api
let accountId: string
let apiKey: string
let trader: string

const q = async (sql: string, values: unknown[] = []) => (await app.services.pool.query(sql, values)).rows
const sentTxs = async (agentId: string) => (await q(`select count(*)::int as n from chain_tx where agent_id = $1`, [agentId]))[0].n as number
const toolMessagesSent = () =>
  model.mock.getRequests().flatMap((r) => ((r.body as { messages?: Array<{ role: string; content: string }> } | null)?.messages ?? []).filter((m) => m.role === 'tool'))

beforeAll(async () => {
  model = await startModelServer()
  app = await startTestApp({ OPENAI_BASE_URL: model.baseUrl, OPENAI_API_KEY: 'test-key'}, { withChain: true })
  ;({ api, accountId, apiKey } = await app.account())
  trader = (await api('POST', '/agents', { name: 'trader', skills: ['trading'], system_prompt: 'Trade carefully.' })).body.id
  expect((await api('POST', '/dev/faucet', { agentId: trader, eth: '5' })).status).toBe(200)
})
afterAll(async () => {
  await app?.close()
  await model?.stop()
})
beforeEach(() => model.mock.reset())

describe('chat with tools (real SDK against the scripted model server)', () => {
  it('runs a swap the model asks for: one swap on chain, its tx hash in the answer, one model_usage charge per call', async () => {
    model.mock.on(
      { userMessage: 'buy some usdc', hasToolResult: false },
      { toolCalls: [{ id: 'call_swap', name: 'swap_execute', arguments: '{"tokenIn":"ETH","tokenOut":"USDC","amountIn":"0.01"}' }], usage: { prompt_tokens: 900, completion_tokens: 40 } },
    )
    model.mock.onToolResult('call_swap', { content: 'Bought USDC for 0.01 ETH.', usage: { prompt_tokens: 1200, completion_tokens: 12 } })
    const before = await sentTxs(trader)
    const res = await api('POST', `/agents/${trader}/chat`, { message: 'buy some usdc', temperature: 0.3 })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ role: 'assistant', content: 'Bought USDC for 0.01 ETH.', model: 'gpt-4o-mini', usage: { promptTokens: 2100, completionTokens: 52, totalTokens: 2152 } })
    const [call] = res.body.toolCalls
    expect(call).toMatchObject({ id: 'call_swap', name: 'swap_execute', arguments: { tokenIn: 'ETH', tokenOut: 'USDC', amountIn: '0.01' }, status: 'ok', result: { status: 'confirmed' } })
    expect(await sentTxs(trader)).toBe(before + 1)
    const [tx] = await q(`select hash from chain_tx where agent_id = $1 order by created_at desc limit 1`, [trader])
    expect(call.result.txHash).toBe(tx.hash)

    // One charge per model call, ref = its effect id; the answer's credits are their sum.
    // The ledger as GET /billing/transactions reads it: the pending charges folded in first.
    await q('select credits_fold(id) from account')
    const charges = await q(`select credits, ref from credit_entry where account_id = $1 and kind = 'model_usage' and ref like $2`, [accountId, `${res.body.id}:%`])
    expect(charges).toHaveLength(2)
    expect(res.body.credits).toBe(-charges.reduce((s, c) => s + Number(c.credits), 0))
    expect(res.body.cost).toBe(res.body.credits / 1000)
    const [{ credits, credits_reserved, ledger }] = await q(
      `select a.credits, credits_held(a.id) as credits_reserved, (select sum(credits) from credit_entry e where e.account_id = a.id) as ledger from account a where a.id = $1`,
      [accountId],
    )
    expect(Number(credits)).toBe(Number(ledger))
    expect(Number(credits_reserved)).toBe(0)

    // The model saw the system prompt with the owner's instructions, the tools and the temperature.
    const first = model.mock.getRequests()[0]!.body as { messages: Array<{ role: string; content: string }>; tools: Array<{ function: { name: string } }>; temperature: number }
    expect(first.messages[0]).toMatchObject({ role: 'system', content: expect.stringContaining('Trade carefully.') })
    expect(first.tools.map((t) => t.function.name)).toEqual(['get_agent', 'swap_quote', 'swap_execute', 'get_portfolio', 'get_whitelist', 'get_price'])
    expect(first.temperature).toBe(0.3)

    const history = await api('GET', `/agents/${trader}/messages?limit=4`)
    expect(history.status, JSON.stringify(history.body)).toBe(200)
    expect(history.body.messages.map((m: { role: string }) => m.role)).toEqual(['assistant', 'tool', 'assistant', 'user'])
    expect(history.body.messages[2].toolCalls).toEqual([{ id: 'call_swap', name: 'swap_execute', arguments: expect.any(String) }])
    const turn = await api('GET', `/agents/${trader}/chat/${res.body.id}`)
    expect(turn.body).toMatchObject({ id: res.body.id, status: 'completed', credits: res.body.credits })
  })

  it('refuses an amount over the policy and another agent id; the model is told why and nothing moves', async () => {
    const other = (await api('POST', '/agents', { name: 'other' })).body.id
    model.mock.on(
      { userMessage: 'go big', hasToolResult: false },
      {
        toolCalls: [
          { id: 'call_big', name: 'swap_execute', arguments: '{"tokenIn":"ETH","tokenOut":"USDC","amountIn":"3"}' },
          { id: 'call_other', name: 'get_agent', arguments: JSON.stringify({ agent_id: other }) },
        ],
      },
    )
    model.mock.onToolResult('call_big', { content: 'The policy refused it.' })
    const before = await sentTxs(trader)
    const res = await api('POST', `/agents/${trader}/chat`, { message: 'go big' })
    expect(res.status).toBe(200)
    expect(res.body.toolCalls).toMatchObject([
      { id: 'call_big', status: 'refused', result: { code: 'policy_violation' } },
      { id: 'call_other', status: 'refused', result: { code: 'not_found' } },
    ])
    expect(await sentTxs(trader)).toBe(before)
    const told = toolMessagesSent().map((m) => m.content)
    expect(told.some((c) => c.includes('policy_violation'))).toBe(true)
    expect(told.some((c) => c.includes('not_found'))).toBe(true)
  })

  it('refuses a tool outside the agent skills', async () => {
    const reader = (await api('POST', '/agents', { name: 'reader', skills: [] })).body.id
    await api('POST', '/dev/faucet', { agentId: reader, eth: '1' })
    model.mock.on({ userMessage: 'swap please', hasToolResult: false }, { toolCalls: [{ id: 'call_nope', name: 'swap_execute', arguments: '{"tokenIn":"ETH","tokenOut":"USDC","amountIn":"0.01"}' }] })
    model.mock.onToolResult('call_nope', { content: 'I may not trade.' })
    const res = await api('POST', `/agents/${reader}/chat`, { message: 'swap please' })
    expect(res.status).toBe(200)
    expect(res.body.toolCalls).toMatchObject([{ id: 'call_nope', status: 'refused', result: { code: 'tool_not_granted' } }])
    expect(await sentTxs(reader)).toBe(0)
    // The model saw only the tools the skills grant, and then the refusal.
    expect((model.mock.getRequests()[0]!.body as { tools: Array<{ function: { name: string } }> }).tools.map((t) => t.function.name)).toEqual(['get_agent', 'get_portfolio', 'get_whitelist'])
    expect(toolMessagesSent().some((m) => m.content.includes('tool_not_granted'))).toBe(true)
  })

  it('grants the tools of a custom skill and puts its instructions in the system prompt as untrusted text', async () => {
    const skill = await api('POST', '/skills/custom', {
      slug: 'quoter', name: 'Quoter', description: 'Quotes swaps.', instructions: 'Always quote before you answer.', tools: ['swap_quote'],
    })
    expect(skill.status).toBe(201)
    const quoter = (await api('POST', '/agents', { name: 'quoter', skills: ['quoter'] })).body.id
    await api('POST', '/dev/faucet', { agentId: quoter, eth: '1' })
    model.mock.on({ userMessage: 'price check', hasToolResult: false }, { toolCalls: [{ id: 'call_q', name: 'swap_quote', arguments: '{"tokenIn":"ETH","tokenOut":"USDC","amountIn":"0.01"}' }] })
    model.mock.onToolResult('call_q', { content: 'Quoted.' })
    const res = await api('POST', `/agents/${quoter}/chat`, { message: 'price check' })
    expect(res.status).toBe(200)
    expect(res.body.toolCalls).toMatchObject([{ id: 'call_q', name: 'swap_quote', status: 'ok' }])
    const first = model.mock.getRequests()[0]!.body as { messages: Array<{ role: string; content: string }>; tools: Array<{ function: { name: string } }> }
    expect(first.tools.map((t) => t.function.name)).toContain('swap_quote')
    expect(first.tools.map((t) => t.function.name)).not.toContain('swap_execute')
    const system = first.messages[0]!.content
    expect(system).toContain('Always quote before you answer.')
    expect(system).toMatch(/<<<UNTRUSTED SKILL [0-9a-f]{16} ref=[^>]+\/quoter>>>/)
    expect(await sentTxs(quoter)).toBe(0)
  })

  it('streams deltas before done, and tool_call / tool_result events', async () => {
    model.mock.on({ userMessage: 'stream it', hasToolResult: false }, { toolCalls: [{ id: 'call_me', name: 'get_agent', arguments: '{}' }] })
    model.mock.onToolResult('call_me', { content: 'one two three four five six', usage: { prompt_tokens: 50, completion_tokens: 6 } }, { chunkSize: 4 })
    const res = await fetch(`${app.url}/api/v1/agents/${trader}/chat`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ message: 'stream it' }),
    })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/)
    const events = parseSse(await res.text())
    const types = events.map((e) => e.event)
    expect(types.filter((t) => t === 'delta').length).toBeGreaterThan(1)
    expect(types.indexOf('tool_call')).toBeLessThan(types.indexOf('tool_result'))
    expect(types.lastIndexOf('delta')).toBeLessThan(types.indexOf('done'))
    expect(types.at(-1)).toBe('done')
    const done = events.at(-1)!.data
    expect(done).toMatchObject({ role: 'assistant', content: 'one two three four five six', toolCalls: [{ id: 'call_me', status: 'ok' }] })
    expect(events.filter((e) => e.event === 'delta').map((e) => e.data.content).join('')).toBe(done.content)
  })

  it('answers 502 when the provider fails, and holds no credits afterwards', async () => {
    model.mock.nextRequestError(500)
    const res = await api('POST', `/agents/${trader}/chat`, { message: 'anything' })
    expect(res.status).toBe(502)
    expect(res.body.code).toBe('model_provider_error')
    expect(res.body.error).not.toMatch(/test-key/)
    const [{ credits_reserved }] = await q('select credits_held(id) as credits_reserved from account where id = $1', [accountId])
    expect(Number(credits_reserved)).toBe(0)
  })

  it('answers 402 when the credits cannot cover the first call, and starts nothing', async () => {
    const broke = await app.account({ name: 'broke' })
    const agent = (await broke.api('POST', '/agents', { name: 'poor' })).body.id
    const { credits } = await app.services.credits.balance(broke.accountId)
    await app.services.credits.append({ accountId: broke.accountId, kind: 'market_purchase', credits: -credits, ref: 'drain' })
    const res = await broke.api('POST', `/agents/${agent}/chat`, { message: 'hello' })
    expect(res.status).toBe(402)
    expect(res.body.code).toBe('insufficient_credits')
    expect(await q('select 1 from chat_message where agent_id = $1', [agent])).toHaveLength(0)
    expect(model.mock.getRequests()).toHaveLength(0)
  })
})

/** Splits an event stream into `{ event, data }` records. */
function parseSse(text: string): Array<{ event: string; data: any }> {
  return text
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      const lines = block.split('\n')
      const event = lines.find((l) => l.startsWith('event: '))!.slice(7)
      const data = JSON.parse(lines.find((l) => l.startsWith('data: '))!.slice(6))
      return { event, data }
    })
}

describe('chat requests (no chain)', () => {
  let b: TestApp
  let bApi: Api
  let bKey: string
  let agent: string
  beforeAll(async () => {
    b = await startTestApp({ OPENAI_BASE_URL: model.baseUrl, OPENAI_API_KEY: 'test-key', CHAT_WAIT_SECONDS: '0.3' })
    ;({ api: bApi, apiKey: bKey } = await b.account())
    agent = (await bApi('POST', '/agents', { name: 'talker' })).body.id
  })
  afterAll(() => b?.close())

  it('refuses bad input with field errors, another account agent with 404, a deleted agent with 409', async () => {
    const bad = async (body: unknown) => {
      const res = await bApi('POST', `/agents/${agent}/chat`, body)
      expect(res.status).toBe(422)
      expect(res.body.code).toBe('validation_failed')
      return Object.keys(res.body.field_errors)
    }
    expect(await bad({ message: '   ' })).toEqual(['message'])
    expect(await bad({ message: 'x'.repeat(8001) })).toEqual(['message'])
    expect(await bad({ message: 'hi', model: 'no-such-model' })).toEqual(['model'])
    expect(await bad({ message: 'hi', temperature: 2.5 })).toEqual(['temperature'])
    expect(await bad({ message: 'hi', extra: true })).toEqual(['extra'])
    const stranger = await b.account({ name: 'stranger' })
    expect((await stranger.api('POST', `/agents/${agent}/chat`, { message: 'hi' })).status).toBe(404)
    const gone = (await bApi('POST', '/agents', { name: 'gone' })).body.id
    expect((await bApi('DELETE', `/agents/${gone}`)).status).toBe(200)
    const deleted = await bApi('POST', `/agents/${gone}/chat`, { message: 'hi' })
    expect(deleted.status).toBe(409)
    expect(model.mock.getRequests()).toHaveLength(0)
  })

  it('answers 202 with the turn id when the turn outlives the wait; the turn completes and its messages appear', async () => {
    // The model answers only once the request has had its 202.
    let answer!: () => void
    const gate = new Promise<void>((r) => (answer = r))
    model.mock.onMessage('take your time', async () => {
      await gate
      return { content: 'Done at last.' }
    })
    const res = await bApi('POST', `/agents/${agent}/chat`, { message: 'take your time' })
    expect(res.status).toBe(202)
    expect(res.body).toMatchObject({ id: expect.any(String), status: 'thinking' })
    expect((await bApi('GET', `/agents/${agent}/chat/${res.body.id}`)).body).toMatchObject({ id: res.body.id, status: 'thinking' })
    answer()
    // The test reads the turn until it ends; the service itself is woken by its commits.
    await b.services.runtime.waitFor(res.body.id, (e) => e.status === 'completed', 10_000)
    const turn = await bApi('GET', `/agents/${agent}/chat/${res.body.id}`)
    expect(turn.status).toBe(200)
    expect(turn.body).toMatchObject({ id: res.body.id, status: 'completed', content: 'Done at last.' })
    const history = await bApi('GET', `/agents/${agent}/messages`)
    expect(history.body.messages.slice(0, 2).map((m: { role: string; content: string }) => [m.role, m.content])).toEqual([
      ['assistant', 'Done at last.'],
      ['user', 'take your time'],
    ])
    expect((await bApi('GET', `/agents/${agent}/chat/00000000-0000-4000-8000-000000000000`)).status).toBe(404)
  })

  it('goes on when a streaming client disconnects', async () => {
    let answer!: () => void
    const gate = new Promise<void>((r) => (answer = r))
    model.mock.onMessage('keep going', async () => {
      await gate
      return { content: 'Still here.' }
    })
    const client = new AbortController()
    const res = await fetch(`${b.url}/api/v1/agents/${agent}/chat`, {
      method: 'POST',
      headers: { authorization: `Bearer ${bKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ message: 'keep going', stream: true }),
      signal: client.signal,
    })
    expect(res.status).toBe(200)
    client.abort()
    const { rows } = await b.services.pool.query(`select turn_id from chat_message where agent_id = $1 and content = 'keep going'`, [agent])
    answer()
    const ended = await b.services.runtime.waitFor(rows[0].turn_id, (e) => e.status === 'completed' || e.status === 'failed', 10_000)
    expect(ended?.status).toBe('completed')
    const history = await bApi('GET', `/agents/${agent}/messages?limit=1`)
    expect(history.body.messages[0]).toMatchObject({ role: 'assistant', content: 'Still here.' })
  })

  it('pages messages newest first with limit and before', async () => {
    const pager = (await bApi('POST', '/agents', { name: 'pager' })).body.id
    for (const n of [1, 2, 3]) {
      model.mock.onMessage(`message ${n}`, { content: `answer ${n}` })
      const res = await bApi('POST', `/agents/${pager}/chat`, { message: `message ${n}` })
      // This app waits 0.3 s for a turn: on a loaded machine one may outlive it (202); the pages need each turn ended.
      expect([200, 202]).toContain(res.status)
      if (res.status === 202) await b.services.runtime.waitFor(res.body.id, (e) => e.status === 'completed', 10_000)
    }
    const page1 = await bApi('GET', `/agents/${pager}/messages?limit=4`)
    expect(page1.body.messages.map((m: { content: string }) => m.content)).toEqual(['answer 3', 'message 3', 'answer 2', 'message 2'])
    expect(page1.body.hasMore).toBe(true)
    expect(page1.body.messages[0]).toEqual({ id: expect.any(String), role: 'assistant', content: 'answer 3', model: 'gpt-4o-mini', createdAt: expect.any(String) })
    const page2 = await bApi('GET', `/agents/${pager}/messages?limit=4&before=${encodeURIComponent(page1.body.messages.at(-1).createdAt)}`)
    expect(page2.body.messages.map((m: { content: string }) => m.content)).toEqual(['answer 1', 'message 1'])
    expect(page2.body.hasMore).toBe(false)
    expect((await bApi('GET', `/agents/${pager}/messages?limit=0`)).status).toBe(422)
    // The second turn's prompt carried the first turn's text as history.
    const second = model.mock.getRequests().find((r) => JSON.stringify(r.body).includes('message 2'))!.body as { messages: Array<{ content: string }> }
    expect(second.messages.map((m) => m.content)).toEqual([expect.any(String), 'message 1', 'answer 1', 'message 2'])
  })

  it('stores an answer with NUL characters (which Postgres text and jsonb refuse) without them', async () => {
    const plain = (await bApi('POST', '/agents', { name: 'nul' })).body.id
    model.mock.onMessage('say nul', { content: 'Done.\u0000 All\u0000 good.' })
    const res = await bApi('POST', `/agents/${plain}/chat`, { message: 'say nul' })
    expect(res.status).toBe(200)
    expect(res.body.content).toBe('Done. All good.')
    const history = await bApi('GET', `/agents/${plain}/messages`)
    expect(history.body.messages[0]).toMatchObject({ role: 'assistant', content: 'Done. All good.' })
  })

  it('answers 503 without a model provider', async () => {
    const c = await startTestApp()
    try {
      const { api: cApi } = await c.account()
      const id = (await cApi('POST', '/agents', { name: 'mute' })).body.id
      const res = await cApi('POST', `/agents/${id}/chat`, { message: 'hello' })
      expect(res.status).toBe(503)
      expect(res.body.code).toBe('model_provider_not_configured')
    } finally {
      await c.close()
    }
  })
})

import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  AuthenticationError, ConflictError, KEYED_OPERATIONS, NotFoundError, PermissionError, UnprocessableError, ValidationError,
  verifyWebhook, WebhookSignatureError, type AltsClient,
} from '../clients/typescript/src/index.ts'
import { generateTypes } from '../clients/typescript/scripts/generate.ts'
import { startTestApp, type TestApp } from './support/app.ts'
import { failure, operationsOf, recordedClient } from './support/altsClient.ts'
import { startModelServer, type ModelServer } from './support/modelServer.ts'
import { startReceiver } from './support/webhookReceiver.ts'
import { waitFor } from './support/waitFor.ts'
import { Webhook } from 'standardwebhooks'

/*
 * The first-party client (clients/typescript) against the live service: its committed types
 * are those of the served document, and every operation of the document is called through it
 * at least once (the last test enumerates them), each answer read as the client gives it: the
 * body, or a typed error with its code.
 */
const called = new Set<string>()
let app: TestApp
let model: ModelServer
let receiver: Awaited<ReturnType<typeof startReceiver>>
let alts: AltsClient
let buyer: AltsClient
let ops: AltsClient
let pub: AltsClient
let document: { paths: Record<string, Record<string, any>> }
let agentId: string
let usdc: string
let launchedToken: string
let swapId: string
let runId: string

beforeAll(async () => {
  model = await startModelServer()
  receiver = await startReceiver()
  app = await startTestApp({ OPENAI_BASE_URL: model.baseUrl, OPENAI_API_KEY: 'test-key' }, { withChain: true })
  const client = async (opts: { operator?: boolean } = {}) => recordedClient({ baseUrl: app.url, apiKey: (await app.account(opts)).apiKey }, called)
  ;[alts, buyer, ops] = [await client(), await client(), await client({ operator: true })]
  pub = recordedClient({ baseUrl: app.url }, called)
  usdc = app.services.chain!.manifest.contracts.usdc.toLowerCase()
}, 120_000)
afterAll(async () => {
  await app?.close()
  await model?.stop()
  await receiver?.close()
})

describe('the client against the live service', () => {
  it('the committed types are generated from the served document; the keyed operations are those with an Idempotency-Key', async () => {
    document = (await pub.GET('/openapi.json')) as typeof document
    const committed = readFileSync('clients/typescript/src/openapi.gen.ts', 'utf8')
    expect(await generateTypes(document), 'run `npm run client:generate`').toBe(committed)
    const keyed = operationsOf(document).filter((op) => {
      const [method, path] = op.split(' ') as [string, string]
      return document.paths[path]![method.toLowerCase()].parameters?.some((p: { name: string }) => p.name === 'Idempotency-Key')
    })
    expect([...KEYED_OPERATIONS].sort()).toEqual(keyed.sort())
  })

  it('public data: health, catalog, skills, auth, tokens and market data', async () => {
    expect(await pub.GET('/health')).toMatchObject({ database: { ok: true } })
    expect(((await pub.GET('/models')) as any).models.length).toBeGreaterThan(0)
    expect((await pub.GET('/skills')).skills.length).toBeGreaterThan(0)
    expect(await pub.GET('/skills/registry')).toBeDefined()
    expect(await pub.GET('/auth/nonce')).toHaveProperty('nonce')
    expect(await failure(pub.GET('/auth/session'))).toBeInstanceOf(AuthenticationError)
    expect(await pub.GET('/auth/session/state')).toMatchObject({ signedIn: false })
    expect(await pub.POST('/auth/logout')).toBeDefined()
    const siwe = await failure(pub.POST('/auth/siwe', { body: {} as never }))
    expect(siwe).toBeInstanceOf(ValidationError)
    expect(Object.keys(siwe.field_errors).length).toBeGreaterThan(0)
    expect(await pub.GET('/quotes', { params: { query: { venue: 'venue-a' } } })).toBeDefined()
    expect(await pub.GET('/stock-tokens')).toBeDefined()
    expect(await pub.GET('/stats')).toBeDefined()
    expect(await pub.GET('/leaderboard')).toBeDefined()
    expect((await pub.GET('/price', { params: { query: { tokens: usdc } } })).prices).toHaveLength(1)
    for (const path of ['/signals/top-movers', '/signals/anomalies', '/signals/yield', '/signals/macro'] as const) expect(await pub.GET(path)).toBeDefined()
  })

  it('the account: profile, keys, agents (paged), whitelist, clone, paper deposit, audit', async () => {
    expect(await alts.GET('/me')).toHaveProperty('id')
    expect(await alts.POST('/me', { body: { name: 'client' } as never })).toMatchObject({ name: 'client' })
    const key = (await alts.POST('/keys', { body: { name: 'reader', scopes: ['read'] } as never })) as any
    expect((await alts.GET('/keys') as any).keys.map((k: { id: string }) => k.id)).toContain(key.id)
    expect(await alts.DELETE('/keys/{id}', { params: { path: { id: key.id } } })).toMatchObject({ deleted: true })
    const made = []
    for (const name of ['a1', 'a2', 'a3']) made.push((await alts.POST('/agents', { body: { name, skills: ['trading'] } })).id)
    agentId = made[0]!
    const listed = []
    for await (const agent of alts.paginate('/agents', { query: { limit: '2' } })) listed.push(agent.id)
    expect(listed.sort()).toEqual([...made].sort())
    expect(await alts.GET('/agents/{id}', { params: { path: { id: agentId } } })).toMatchObject({ id: agentId, name: 'a1' })
    expect(await alts.POST('/agents/{id}', { params: { path: { id: made[1]! } }, body: { persona: 'calm' } as never })).toMatchObject({ persona: 'calm' })
    expect(await alts.PATCH('/agents/{id}', { params: { path: { id: made[1]! } }, body: { persona: 'bold' } as never })).toMatchObject({ persona: 'bold' })
    expect(await alts.POST('/agents/{id}/start', { params: { path: { id: made[1]! } } })).toMatchObject({ status: 'running' })
    expect(await alts.POST('/agents/{id}/stop', { params: { path: { id: made[1]! } } })).toMatchObject({ status: 'stopped' })
    const friend = '0x' + '2'.repeat(40)
    await alts.POST('/agents/{id}/whitelist', { params: { path: { id: agentId } }, body: { address: friend } as never })
    expect(((await alts.GET('/agents/{id}/whitelist', { params: { path: { id: agentId } } })) as any).whitelist).toHaveLength(1)
    const clone = (await alts.POST('/agents/{id}/clone', { params: { path: { id: made[2]! } }, body: {} as never })) as any
    expect(clone.id).not.toBe(made[2])
    const gone = await alts.DELETE('/agents/{id}', { params: { path: { id: clone.id } } })
    expect(gone).toMatchObject({ status: 'deleted' })
    const paper = await alts.POST('/agents', { body: { name: 'paper', mode: 'paper' } as never })
    expect(await alts.POST('/agents/{id}/paper/deposit', { params: { path: { id: paper.id } }, body: { token: 'USDC', amount: '10' } as never })).toBeDefined()
    const removed = await alts.DELETE('/agents/{id}/whitelist', { params: { path: { id: agentId }, query: { address: friend } } as never })
    expect(removed).toMatchObject({ deleted: true })
    const audit = []
    for await (const entry of alts.paginate('/agents/{id}/audit', { path: { id: agentId } })) audit.push(entry)
    expect(audit.length).toBeGreaterThan(0)
    const notMine = await failure(buyer.GET('/agents/{id}', { params: { path: { id: agentId } } }))
    expect(notMine).toBeInstanceOf(NotFoundError)
    expect(notMine.code).toBe('not_found')
  })

  it('a launch followed to live over SSE; a swap executed with a key the client made, followed to confirmed', async () => {
    expect(await alts.POST('/dev/faucet', { body: { agentId, eth: '5', usdc: '1000' } as never })).toBeDefined()
    expect(await alts.POST('/launch/preview', { body: { agentId, venue: 'venue-a', symbol: 'CLI', name: 'Client', quote: 'ETH' } as never })).toBeDefined()
    const launches = []
    for (const venue of ['venue-a', 'venue-b'] as const) {
      const started = (await alts.POST(`/launch/${venue}`, { body: { agentId, symbol: venue === 'venue-a' ? 'CLA' : 'CLB', name: 'Client', quote: 'ETH' } as never })) as any
      const states = []
      for await (const e of alts.follow.launch(started.id)) states.push(e.status)
      expect(states.at(-1)).toBe('live')
      launches.push(started.id)
    }
    const self = (await alts.POST('/launch/self-funded', { body: { agentId, symbol: 'CLS', name: 'Self', quote: 'USDC', seedAmount: '100' } as never })) as any
    expect((await alts.end(alts.follow.launch(self.id))).status).toBe('live')
    const launch = (await alts.GET('/launch/{id}', { params: { path: { id: launches[0] } } })) as any
    expect(launch.status).toBe('live')
    const token = launch.tokenAddress as string
    launchedToken = token
    expect(await pub.GET('/tokens/{address}', { params: { path: { address: token } } })).toBeDefined()
    expect(await pub.GET('/tokens/{address}/trades', { params: { path: { address: token } } })).toBeDefined()
    expect(await pub.GET('/tokens/{address}/candles', { params: { path: { address: token } } })).toBeDefined()
    expect(await failure(pub.GET('/indicators', { params: { query: { mint: token } } as never }))).toMatchObject({ status: 422, code: 'validation_failed', field_errors: { indicators: expect.stringContaining('candles') } })
    const tokens = []
    for await (const t of pub.paginate('/tokens')) tokens.push(t)
    expect(tokens.length).toBeGreaterThanOrEqual(3)

    const body = { agentId, tokenIn: 'ETH', tokenOut: 'USDC', amountIn: '0.01', slippageBps: 300 }
    expect(await alts.POST('/swap/quote', { body: body as never })).toHaveProperty('quoteId')
    const swap = (await alts.POST('/swap/execute', { body: body as never })) as any
    const ends = []
    for await (const e of alts.follow.swap(swap.id)) ends.push(e)
    expect(ends.at(-1)!.status).toBe('confirmed')
    swapId = swap.id
    expect(new Set(ends.map((e) => e.id)).size).toBe(ends.length)
    // The client sent a fresh key (a UUID) of its own; sent again by the caller, it replays the swap.
    const { rows } = await app.services.pool.query(`select key from idempotency_key where response_body->>'id' = $1`, [swap.id])
    expect(rows).toEqual([{ key: expect.stringMatching(/^[0-9a-f-]{36}$/) }])
    const replay = (await alts.POST('/swap/execute', { body: body as never, headers: { 'idempotency-key': rows[0].key } })) as any
    expect(replay).toMatchObject({ id: swap.id, meta: { replayOf: swap.meta.requestId } })
    expect(await alts.GET('/swap/{id}', { params: { path: { id: swap.id } } })).toMatchObject({ status: 'confirmed' })
    expect(await alts.GET('/wallet/portfolio', { params: { query: { agentId } } as never })).toBeDefined()
    expect(await alts.GET('/agents/{id}/performance', { params: { path: { id: agentId } } })).toBeDefined()
    const wallet = (await alts.GET('/agents/{id}', { params: { path: { id: agentId } } })).walletAddress
    expect(await alts.GET('/portfolio', { params: { query: { wallet } } })).toBeDefined()
    const txs = []
    for await (const tx of alts.paginate('/agents/{id}/transactions', { path: { id: agentId } })) txs.push(tx)
    expect(txs.length).toBeGreaterThanOrEqual(4)
    const transfer = await failure(alts.POST('/wallet/transfer', { body: { agentId, to: '0x' + '3'.repeat(40), token: 'USDC', amount: '1' } as never }))
    expect(transfer).toBeInstanceOf(PermissionError)
    expect(transfer.code).toBe('address_not_whitelisted')
    expect(await alts.GET('/fees/earnings', { params: { query: { agentId } } as never })).toBeDefined()
    const claim = await failure(alts.POST('/fees/claim', { body: { agentId } as never }))
    expect(claim).toBeInstanceOf(UnprocessableError)
    expect(await alts.GET('/fees/stats')).toBeDefined()
  })

  it('a chat turn and a run followed to their end; the chat history; a run stopped', async () => {
    model.mock.onMessage('hello client', { content: 'Hi from the model.' })
    const turn = (await alts.POST('/agents/{id}/chat', { params: { path: { id: agentId } }, body: { message: 'hello client' } as never })) as any
    const ended = await alts.end(alts.follow.chatTurn(agentId, turn.id))
    expect(ended).toMatchObject({ status: 'completed' })
    expect(await alts.GET('/agents/{id}/chat/{turnId}', { params: { path: { id: agentId, turnId: turn.id } } })).toMatchObject({ status: 'completed' })
    expect(((await alts.GET('/agents/{id}/messages', { params: { path: { id: agentId } } })) as any).messages.length).toBeGreaterThanOrEqual(2)
    model.mock.onMessage('a short run', { content: 'Nothing to do.' })
    const run = (await alts.POST('/agents/{id}/runs', { params: { path: { id: agentId } }, body: { goal: 'a short run', maxSteps: 2 } as never })) as any
    expect((await alts.end(alts.follow.run(run.id))).status).toBe('completed')
    runId = run.id
    expect(await alts.GET('/runs/{id}', { params: { path: { id: run.id } } })).toMatchObject({ status: 'completed' })
    const runs = []
    for await (const r of alts.paginate('/agents/{id}/runs', { path: { id: agentId } })) runs.push(r)
    expect(runs).toHaveLength(1)
    expect(await alts.POST('/runs/{id}/stop', { params: { path: { id: run.id } } })).toMatchObject({ status: 'completed' })
  })

  it('billing, the marketplace (listing, bid, buy) and custom skills', async () => {
    expect(await alts.GET('/billing')).toHaveProperty('credits')
    const ledger = []
    for await (const entry of alts.paginate('/billing/transactions')) ledger.push(entry)
    expect(ledger.length).toBeGreaterThan(0)
    expect(await alts.GET('/billing/deposit')).toBeDefined()
    const skill = (await alts.POST('/skills/custom', { body: { slug: 'client-skill', name: 'Client', description: 'a skill', instructions: 'be careful' } as never })) as any
    expect(await alts.GET('/skills/custom/{id}', { params: { path: { id: skill.id } } })).toMatchObject({ slug: 'client-skill' })
    expect(await alts.PATCH('/skills/custom/{id}', { params: { path: { id: skill.id } }, body: { name: 'Client 2' } as never })).toMatchObject({ name: 'Client 2' })
    const skills = []
    for await (const s of alts.paginate('/skills/custom')) skills.push(s)
    expect(skills).toHaveLength(1)
    expect(await alts.DELETE('/skills/custom/{id}', { params: { path: { id: skill.id } } })).toBeDefined()

    const [sold, bidOn, withdrawn] = await Promise.all(['m1', 'm2', 'm3'].map(async (name) => (await alts.POST('/agents', { body: { name } })).id))
    const list = async (id: string) => (await alts.POST('/market', { body: { agentId: id, priceCredits: 10 } as never })) as any
    const [l1, l2, l3] = [await list(sold!), await list(bidOn!), await list(withdrawn!)]
    expect(await pub.GET('/market/{id}', { params: { path: { id: l1.id } } })).toMatchObject({ id: l1.id })
    const market = []
    for await (const l of pub.paginate('/market')) market.push(l)
    expect(market.length).toBeGreaterThanOrEqual(3)
    expect(await buyer.POST('/market/{id}/buy', { params: { path: { id: l1.id } } })).toMatchObject({ id: l1.id })
    const bid = (await buyer.POST('/market/{id}/bids', { params: { path: { id: l2.id } }, body: { credits: 5 } as never })) as any
    const bid3 = (await buyer.POST('/market/{id}/bids', { params: { path: { id: l3.id } }, body: { credits: 5 } as never })) as any
    expect(((await buyer.GET('/market/bids')) as any).bids.length).toBe(2)
    expect(((await alts.GET('/market/bids/received')) as any).bids.length).toBe(2)
    expect(await alts.POST('/market/bids/{bidId}/reject', { params: { path: { bidId: bid.id } } })).toBeDefined()
    expect(await buyer.DELETE('/market/bids/{bidId}', { params: { path: { bidId: bid3.id } } })).toBeDefined()
    const bid2 = (await buyer.POST('/market/{id}/bids', { params: { path: { id: l2.id } }, body: { credits: 8 } as never })) as any
    expect(await alts.POST('/market/bids/{bidId}/accept', { params: { path: { bidId: bid2.id } } })).toBeDefined()
    expect(await alts.DELETE('/market/{id}', { params: { path: { id: l3.id } } })).toBeDefined()
    const history = []
    for await (const h of alts.paginate('/market/history')) history.push(h)
    expect(history.length).toBeGreaterThanOrEqual(2)
  })

  it('automations: created, updated, triggered, fired by their signed hook, followed until cancelled; a backtest', async () => {
    await alts.POST('/agents/{id}/start', { params: { path: { id: agentId } } })
    const action = { type: 'tool_call', tool: 'swap_quote', args: { tokenIn: 'ETH', tokenOut: 'USDC', amountIn: '0.01' } }
    const auto = (await alts.POST('/automations', { body: { agent_id: agentId, name: 'signal', trigger: { type: 'webhook' }, action } as never })) as any
    expect(await alts.GET('/automations/{id}', { params: { path: { id: auto.id } } })).toMatchObject({ id: auto.id })
    expect(await alts.PATCH('/automations/{id}', { params: { path: { id: auto.id } }, body: { name: 'signal 2' } as never })).toMatchObject({ name: 'signal 2' })
    expect(await alts.POST('/automations/{id}/trigger', { params: { path: { id: auto.id } } })).toBeDefined()
    const rotated = (await alts.POST('/automations/{id}/hook/rotate', { params: { path: { id: auto.id } }, body: {} as never })) as any
    const [, hookId, token] = /\/hooks\/automations\/([^/]+)\/([^/]+)$/.exec(rotated.url)!
    const body = { id: 'client-1', price: 1 }
    const at = new Date()
    const headers = { 'webhook-id': 'client-1', 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': new Webhook(rotated.secret).sign('client-1', at, JSON.stringify(body)) }
    expect(await pub.POST('/hooks/automations/{id}/{token}', { params: { path: { id: hookId!, token: token! } }, body: body as never, headers })).toBeDefined()
    const autos = []
    for await (const a of alts.paginate('/automations', { query: { agent_id: agentId } as never })) autos.push(a)
    expect(autos).toHaveLength(1)
    const states: string[] = []
    const followed = (async () => {
      for await (const e of alts.follow.automation(auto.id)) states.push(e.status)
    })()
    await waitFor(async () => states.length > 0, 20_000)
    expect(await alts.DELETE('/automations/{id}', { params: { path: { id: auto.id } } })).toBeDefined()
    await followed
    expect(states.at(-1)).toBe('cancelled')
    const now = Math.floor(Date.now() / 1000)
    const iso = (t: number) => new Date(t * 1000).toISOString()
    const backtest = { automation: { name: 'd', kind: 'dca', dca: { tokenIn: 'USDC', tokenOut: launchedToken, amountPerRun: '10', everySeconds: 120 } }, from: iso(now - 3600), to: iso(now), interval: '1m' }
    expect(await alts.POST('/backtests', { body: backtest as never })).toBeDefined()
  })

  it('webhooks: a test delivery verified with verifyWebhook (a forged one refused), deliveries paged and redelivered; the account events stream', async () => {
    const hook = (await alts.POST('/webhooks', { body: { url: receiver.url(), events: ['*'] } as never })) as any
    receiver.trust(hook.secret)
    expect(await alts.GET('/webhooks/{id}', { params: { path: { id: hook.id } } })).toMatchObject({ id: hook.id })
    expect(await alts.PATCH('/webhooks/{id}', { params: { path: { id: hook.id } }, body: { description: 'client' } as never })).toMatchObject({ description: 'client' })
    expect(((await alts.GET('/webhooks')) as any).webhooks.map((w: { id: string }) => w.id)).toContain(hook.id)
    await alts.POST('/webhooks/{id}/test', { params: { path: { id: hook.id } } })
    await waitFor(async () => receiver.received.some((r) => r.payload.type === 'webhook.test'), 20_000)
    const got = receiver.received.find((r) => r.payload.type === 'webhook.test')!
    const headers = { 'webhook-id': got.id, 'webhook-timestamp': got.timestamp, 'webhook-signature': got.signature }
    expect(verifyWebhook(hook.secret, got.body, headers)).toMatchObject({ type: 'webhook.test', data: { webhook: { id: hook.id } } })
    expect(verifyWebhook(hook.secret, new TextEncoder().encode(got.body), new Headers(headers)).type).toBe('webhook.test')
    expect(() => verifyWebhook(hook.secret, got.body.replace('webhook.test', 'swap.confirmed'), headers)).toThrow(WebhookSignatureError)
    expect(() => verifyWebhook(hook.secret, got.body, { ...headers, 'webhook-signature': undefined })).toThrow(WebhookSignatureError)
    const deliveries = []
    for await (const d of alts.paginate('/webhooks/{id}/deliveries', { path: { id: hook.id } })) deliveries.push(d as { id: string })
    expect(deliveries.length).toBeGreaterThan(0)
    const delivery = deliveries[0]!
    expect(await alts.POST('/webhooks/{id}/deliveries/{deliveryId}/redeliver', { params: { path: { id: hook.id, deliveryId: delivery.id } } })).toBeDefined()
    const rotated = (await alts.POST('/webhooks/{id}/rotate-secret', { params: { path: { id: hook.id } } })) as any
    expect(rotated.secret).toMatch(/^whsec_/)
    expect(rotated.secret).not.toBe(hook.secret)
    const events = await alts.raw.GET('/events', { parseAs: 'stream', headers: { accept: 'text/event-stream' } })
    expect(events.response.headers.get('content-type')).toMatch(/^text\/event-stream/)
    await events.data!.cancel()
    expect(await alts.DELETE('/webhooks/{id}', { params: { path: { id: hook.id } } })).toBeDefined()
  })

  it('approvals: a swap above the threshold waits, one approved and followed to confirmed, one rejected', async () => {
    const policy = { max_trade_usd: '10000', max_daily_usd: '100000', require_approval_above_usd: '1' }
    const careful = await alts.POST('/agents', { body: { name: 'careful', policy } as never })
    await alts.POST('/dev/faucet', { body: { agentId: careful.id, eth: '1' } as never })
    const body = { agentId: careful.id, tokenIn: 'ETH', tokenOut: 'USDC', amountIn: '0.01', slippageBps: 300 }
    const [a, b] = [(await alts.POST('/swap/execute', { body: body as never })) as any, (await alts.POST('/swap/execute', { body: body as never })) as any]
    expect([a.status, b.status]).toEqual(['awaiting_approval', 'awaiting_approval'])
    const pending = []
    for await (const p of alts.paginate('/approvals', { query: { status: 'pending' } as never })) pending.push((p as { id: string }).id)
    expect(pending.sort()).toEqual([a.id, b.id].sort())
    expect(await alts.GET('/approvals/{id}', { params: { path: { id: a.id } } })).toMatchObject({ id: a.id })
    await alts.POST('/approvals/{id}/approve', { params: { path: { id: a.id } }, body: { reason: 'fine' } as never })
    expect((await alts.end(alts.follow.swap(a.id))).status).toBe('confirmed')
    await alts.POST('/approvals/{id}/reject', { params: { path: { id: b.id } }, body: { reason: 'no' } as never })
    const twice = await failure(alts.POST('/approvals/{id}/approve', { params: { path: { id: b.id } }, body: {} as never }))
    expect(twice).toBeInstanceOf(ConflictError)
    expect((await alts.end(alts.follow.swap(b.id))).status).toBe('failed')
  })

  it('policies: the account\'s and an agent\'s written and read, a dry run decided by the account\'s reject', async () => {
    const rules = [{ name: 'no big swaps', action: 'reject', criteria: [{ type: 'operation', operations: ['swap'] }, { type: 'usd_value', operator: 'gt', usd: '100000' }] }]
    expect(await alts.PUT('/policies/account', { body: { rules } as never })).toMatchObject({ rules: [expect.objectContaining({ name: 'no big swaps' })] })
    expect(await alts.GET('/policies/account')).toMatchObject({ rules: [expect.objectContaining({ name: 'no big swaps' })] })
    const own = [{ name: 'ask above 500', action: 'require_approval', criteria: [{ type: 'usd_value', operator: 'gt', usd: '500' }] }]
    expect(await alts.PUT('/agents/{id}/policy', { params: { path: { id: agentId } }, body: { rules: own } as never })).toMatchObject({ rules: [expect.objectContaining({ name: 'ask above 500' })] })
    expect(await alts.GET('/agents/{id}/policy', { params: { path: { id: agentId } } })).toMatchObject({ rules: [expect.objectContaining({ name: 'ask above 500' })] })
    const dry = await alts.POST('/policies/simulate', { body: { agentId, operation: { kind: 'swap', tokenIn: 'ETH', tokenOut: 'USDC', amountIn: '0.001' } } as never })
    // 0.001 ETH is far under both limits: no rule matches, the guardrails decide.
    expect(dry).toMatchObject({ decision: 'guardrails', rule: null, matched: [] })
    const bad = await failure(alts.PUT('/policies/account', { body: { rules: [{ name: 'x', action: 'reject', criteria: [{ type: 'moon_phase' }] }] } as never }))
    expect(bad).toBeInstanceOf(ValidationError)
    expect(bad.field_errors).toEqual({ 'rules.0.criteria.0.type': expect.any(String) })
    // Left as they were: the other tests' swaps are small and no rule applies to them.
    await alts.PUT('/policies/account', { body: { rules: [] } as never })
    await alts.PUT('/agents/{id}/policy', { params: { path: { id: agentId } }, body: { rules: [] } as never })
  })

  it('the operator: actors, nodes, audit, an actor\'s timeline and events, agents, dead letters, pause, cancel, verify; /metrics; the tool server', async () => {
    const actors = []
    for await (const a of ops.paginate('/ops/actors', { query: { kind: 'walletop' } as never })) actors.push((a as { id: string }).id)
    expect(actors).toContain(swapId)
    expect(await ops.GET('/ops/actors/counts')).toBeDefined()
    expect(((await ops.GET('/ops/nodes')) as any).nodes.length).toBeGreaterThan(0)
    expect(await ops.GET('/ops/overview')).toBeDefined()
    expect(await ops.GET('/ops/actors/{id}', { params: { path: { id: swapId } } })).toMatchObject({ id: swapId })
    expect(await ops.GET('/ops/actors/{id}/timeline', { params: { path: { id: swapId } } })).toBeDefined()
    const stream = await ops.raw.GET('/ops/actors/{id}/events', { params: { path: { id: swapId } }, parseAs: 'text' })
    expect(stream.data).toContain('"status":"confirmed"')
    expect(await ops.GET('/ops/agents/{id}', { params: { path: { id: agentId } } })).toBeDefined()
    const operations = []
    for await (const o of ops.paginate('/ops/agents/{id}/operations', { path: { id: agentId } })) operations.push(o)
    expect(operations.length).toBeGreaterThan(0)
    expect(await ops.GET('/ops/agents/{id}/value-history', { params: { path: { id: agentId } } })).toBeDefined()
    expect(((await ops.GET('/ops/dead-letters')) as any).deadLetters).toEqual([])
    for (const path of ['/ops/dead-letters/{seq}/retry', '/ops/dead-letters/{seq}/discard'] as const) {
      expect(await failure(ops.POST(path, { params: { path: { seq: '999999' } }, body: { reason: 'none' } as never }))).toBeInstanceOf(NotFoundError)
    }
    const unstick = await failure(ops.POST('/ops/actors/{id}/unstick', { params: { path: { id: swapId } }, body: { reason: 'not stuck' } as never }))
    expect(unstick).toMatchObject({ status: 409, code: 'invalid_state' })
    expect(await ops.POST('/ops/runs/{id}/cancel', { params: { path: { id: runId } }, body: { reason: 'done anyway' } as never })).toMatchObject({ id: runId })
    expect(await ops.POST('/ops/tokens/{address}/verified', { params: { path: { address: launchedToken } }, body: { verified: true } as never })).toMatchObject({ verified: true })
    expect(await ops.POST('/ops/agents/{id}/pause', { params: { path: { id: agentId } }, body: { reason: 'client test' } as never })).toMatchObject({ policy: { paused: true } })
    const audit = []
    for await (const e of ops.paginate('/ops/audit')) audit.push(e)
    expect(audit.length).toBeGreaterThan(0)
    const paused = await failure(alts.POST('/swap/execute', { body: { agentId, tokenIn: 'ETH', tokenOut: 'USDC', amountIn: '0.01' } as never }))
    expect(paused).toMatchObject({ status: 403, code: 'policy_violation' })
    expect(paused).toBeInstanceOf(PermissionError)
    expect(await ops.GET('/metrics', { parseAs: 'text' } as never)).toContain('# HELP')
    expect(await failure(alts.GET('/metrics', { parseAs: 'text' } as never))).toMatchObject({ status: 403 })
    const tools = (await alts.GET('/mcp/tools')) as any
    expect(tools.tools.map((t: { name: string }) => t.name)).toContain('get_agent')
    expect(await alts.POST('/mcp/call', { body: { name: 'get_agent', arguments: { agent_id: agentId } } as never })).toMatchObject({ result: { id: agentId } })
  })

  it('every operation of the OpenAPI document was called through the client', () => {
    const all = operationsOf(document)
    expect(all.length).toBeGreaterThan(100)
    expect(all.filter((op) => !called.has(op))).toEqual([])
  })
})

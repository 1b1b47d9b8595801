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
})

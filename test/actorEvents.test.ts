import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type TestApp } from './support/app.ts'
import { readSse } from './support/sse.ts'
import { startModelServer, type ModelServer } from './support/modelServer.ts'

let app: TestApp
let model: ModelServer
let alice: Awaited<ReturnType<TestApp['account']>>
let bob: Awaited<ReturnType<TestApp['account']>>
let agentId: string
const key = () => `k-${Math.random().toString(36).slice(2)}`

beforeAll(async () => {
  model = await startModelServer()
  app = await startTestApp({ OPENAI_BASE_URL: model.baseUrl, OPENAI_API_KEY: 'test-key' }, { withChain: true })
  alice = await app.account({ name: 'alice' })
  bob = await app.account({ name: 'bob' })
  const a = await alice.api('POST', '/agents', { name: 'streamer', model: 'gpt-4o-mini', skills: ['token-launch', 'trading'] })
  agentId = a.body.id
  expect((await alice.api('POST', '/dev/faucet', { agentId, eth: '20', usdc: '20000' })).status).toBe(200)
})
afterAll(async () => {
  await app?.close()
  await model?.stop()
})

describe('Server-Sent Events for launches and swaps', () => {
  it('a client sees every state of a launch from pending to live in order, and a reconnect with Last-Event-ID misses nothing', async () => {
    const res = await alice.api('POST', '/launch/venue-a', { agentId, symbol: 'SSE', name: 'Streamed', quote: 'ETH' }, { 'idempotency-key': key() })
    expect(res.status).toBe(202)
    const url = `${app.url}/api/v1/launch/${res.body.id}/events`

    // The first connection goes away after two events; the second resumes after the last one it saw.
    const first = await readSse(url, { apiKey: alice.apiKey, stopAfter: 2 })
    expect(first.status).toBe(200)
    expect(first.contentType).toMatch(/^text\/event-stream/)
    expect(first.events.map((e) => e.data.status)).toEqual(['pending', 'simulating'])
    expect(first.events[1]!.data.progress).toEqual({ step: 'simulating', percent: expect.any(Number) })
    const rest = await readSse(url, { apiKey: alice.apiKey, lastEventId: first.events.at(-1)!.id! })
    const all = [...first.events, ...rest.events]
    expect(all.map((e) => e.data.status)).toEqual(['pending', 'simulating', 'submitting', 'confirming', 'live'])
    const ids = all.map((e) => Number(e.id))
    expect(ids).toEqual([...ids].sort((a, b) => a - b))
    expect(new Set(ids).size).toBe(ids.length)
    // The last event is the resource as GET /launch/:id answers it; the stream closed after it.
    const got = await alice.api('GET', `/launch/${res.body.id}`)
    expect(rest.events.at(-1)!.data).toMatchObject({ id: res.body.id, status: 'live', txHash: got.body.txHash, tokenAddress: got.body.tokenAddress })
    // Resuming after the final event: nothing more to send, the stream ends at once.
    expect((await readSse(url, { apiKey: alice.apiKey, lastEventId: rest.events.at(-1)!.id! })).events).toEqual([])
    // Every journaled status was sent: the stream's ids are the journal's sequence numbers.
    const { rows } = await app.services.pool.query('select seq from actor_journal where actor_id = $1 order by seq', [res.body.id])
    expect(ids.every((id) => rows.some((r) => Number(r.seq) === id))).toBe(true)
  })

  it('another account gets 404, and so does an unknown id', async () => {
    const res = await alice.api('POST', '/launch/venue-b', { agentId, symbol: 'MINE', name: 'Mine', quote: 'ETH' }, { 'idempotency-key': key() })
    const other = await readSse(`${app.url}/api/v1/launch/${res.body.id}/events`, { apiKey: bob.apiKey })
    expect(other.status).toBe(404)
    expect(other.body.code).toBe('not_found')
    const unknown = await readSse(`${app.url}/api/v1/runs/00000000-0000-4000-8000-000000000000/events`, { apiKey: alice.apiKey })
    expect(unknown.status).toBe(404)
  })

  it('a swap streams submitting, confirming and confirmed, ending with the swap as GET /swap/:id answers it', async () => {
    const x = await alice.api('POST', '/swap/execute', { agentId, tokenIn: 'ETH', tokenOut: 'USDC', amountIn: '0.1', slippageBps: 100 })
    expect([200, 202]).toContain(x.status)
    const stream = await readSse(`${app.url}/api/v1/swap/${x.body.id}/events`, { apiKey: alice.apiKey })
    expect(stream.events.map((e) => e.data.status)).toEqual(['submitting', 'confirming', 'confirmed'])
    const got = await alice.api('GET', `/swap/${x.body.id}`)
    expect(stream.events.at(-1)!.data).toMatchObject({ id: x.body.id, status: 'confirmed', txHash: got.body.txHash })
    expect((await readSse(`${app.url}/api/v1/swap/${x.body.id}/events`, { apiKey: bob.apiKey })).status).toBe(404)
  })
})

describe('Server-Sent Events for runs', () => {
  it('a run streams its states up to completed, ending with the run as GET /runs/:id answers it; another account gets 404', async () => {
    model.mock.onMessage('stream this run', { content: 'Nothing to do.' })
    const started = await alice.api('POST', `/agents/${agentId}/runs`, { goal: 'stream this run', maxSteps: 2 })
    expect(started.status).toBe(202)
    const url = `${app.url}/api/v1/runs/${started.body.id}/events`
    const stream = await readSse(url, { apiKey: alice.apiKey })
    expect(stream.status).toBe(200)
    expect(stream.events.at(-1)!.data.status).toBe('completed')
    const got = await alice.api('GET', `/runs/${started.body.id}`)
    expect(stream.events.at(-1)!.data).toMatchObject({ id: started.body.id, status: 'completed', agentId: got.body.agentId })
    const other = await readSse(url, { apiKey: bob.apiKey })
    expect(other.status).toBe(404)
    expect(other.body.code).toBe('not_found')
  })
})

describe('the stream waits for commits', () => {
  it('an open stream gets each state as it commits, and closes after the final one (the operator view of an agent)', async () => {
    const op = await app.account({ operator: true, name: 'ops' })
    const id = (await alice.api('POST', '/agents', { name: 'followed', skills: ['trading'] })).body.id
    const seen: string[] = []
    const stream = readSse(`${app.url}/api/v1/ops/actors/${id}/events`, {
      apiKey: op.apiKey,
      onEvent: (e) => {
        seen.push(e.data.status)
        // Each command is sent only once the stream has shown the state before it.
        if (e.data.status === 'stopped') void alice.api('POST', `/agents/${id}/start`)
        if (e.data.status === 'running') void alice.api('DELETE', `/agents/${id}`)
      },
    })
    const done = await stream
    expect(done.status).toBe(200)
    expect(seen).toEqual(['stopped', 'running', 'deleted'])
    expect(done.events.at(-1)!.data).toMatchObject({ id, kind: 'agent', status: 'deleted' })
    expect((await readSse(`${app.url}/api/v1/ops/actors/${id}/events`, { apiKey: alice.apiKey })).status).toBe(403)
  })
})

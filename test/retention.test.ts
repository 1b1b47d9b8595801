import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type Api, type TestApp } from './support/app.ts'
import { startModelServer, type ModelServer } from './support/modelServer.ts'
import { readSse } from './support/sse.ts'
import { waitFor } from './support/waitFor.ts'

/**
 * Retention through the API: a run that moved no money is compacted once its (here 300 ms)
 * window has passed, and the API still serves it as it did: the run, its events stream, a late
 * stop; the operator's view says when it was compacted and shows no history; its chat messages
 * went with its history. A run that started a swap keeps the long window and its messages. Real server, real SDK against the scripted model server.
 */
let model: ModelServer
let app: TestApp
let api: Api
let ops: Api
let apiKey: string
let agentId: string

beforeAll(async () => {
  model = await startModelServer()
  app = await startTestApp(
    { OPENAI_BASE_URL: model.baseUrl, OPENAI_API_KEY: 'test-key', ACTOR_RETENTION_QUIET_MINUTES: '0.005', RETENTION_SWEEP_SECONDS: '0.1', LOG_LEVEL: 'error' },
    { withChain: true },
  )
  ;({ api, apiKey } = await app.account())
  ;({ api: ops } = await app.account({ operator: true, name: 'ops' }))
  agentId = (await api('POST', '/agents', { name: 'quiet', skills: ['trading'] })).body.id
  expect((await api('POST', '/dev/faucet', { agentId, eth: '1' })).status).toBe(200)
})
afterAll(async () => {
  await app?.close()
  await model?.stop()
})

/** An answer without its `meta` (the request id and time of each answer). */
const withoutMeta = ({ meta: _m, ...body }: Record<string, unknown>) => body

const runEnds = async (id: string) => {
  let run: { status: string; meta?: unknown } = { status: 'running' }
  await waitFor(async () => !['queued', 'running'].includes((run = (await api('GET', `/runs/${id}`)).body).status), 30_000)
  return run
}

describe('retention of ended runs', () => {
  it('compacts a run that moved no money after its window; the run, its events and a late stop answer as before', async () => {
    model.mock.on({ userMessage: 'look around' }, { content: 'Nothing to do.', usage: { prompt_tokens: 100, completion_tokens: 3 } })
    const started = await api('POST', `/agents/${agentId}/runs`, { goal: 'look around' })
    expect(started.status).toBe(202)
    const run = await runEnds(started.body.id)
    expect(run.status).toBe('completed')
    const lateStop = await api('POST', `/runs/${started.body.id}/stop`)
    const contents = async () => ((await api('GET', `/agents/${agentId}/messages?limit=100`)).body.messages as Array<{ content: string }>).map((m) => m.content)
    expect(await contents()).toEqual(expect.arrayContaining(['look around', 'Nothing to do.']))

    let actor: { compactedAt: string | null } = { compactedAt: null }
    await waitFor(async () => (actor = (await ops('GET', `/ops/actors/${started.body.id}`)).body).compactedAt !== null, 15_000)
    expect(actor.compactedAt).toEqual(expect.any(String))
    const timeline = await ops('GET', `/ops/actors/${started.body.id}/timeline`)
    expect(timeline.status).toBe(200)
    expect(timeline.body.actor.compactedAt).toEqual(actor.compactedAt)
    expect(timeline.body.timeline).toEqual([])
    // The row keeps what the API serves and drops what only the model calls needed.
    const context = timeline.body.actor.snapshot.context
    expect(context).toMatchObject({ goal: 'look around', steps: [expect.objectContaining({ content: 'Nothing to do.' })] })
    for (const dropped of ['transcript', 'system', 'tools', 'pending', 'runId', 'accountId', 'stepsUsed', 'firstCallHold']) expect(context, dropped).not.toHaveProperty(dropped)

    // The API's answers are the ones it gave before the compaction.
    expect(withoutMeta((await api('GET', `/runs/${started.body.id}`)).body)).toEqual(withoutMeta(run))
    const again = await api('POST', `/runs/${started.body.id}/stop`)
    expect({ status: again.status, body: withoutMeta(again.body) }).toEqual({ status: lateStop.status, body: withoutMeta(lateStop.body) })
    // Its events stream still tells how it ended, and ends.
    const sse = await readSse(`${app.url}/api/v1/runs/${started.body.id}/events`, { apiKey })
    expect(sse.status).toBe(200)
    expect(sse.events.map((e) => e.data.status)).toEqual(['completed'])
    // A quiet run's chat messages went with its history (KEEP_QUIET_RUN_MESSAGES unset).
    const left = await contents()
    expect(left).not.toContain('look around')
    expect(left).not.toContain('Nothing to do.')
    expect(Number((await app.services.pool.query('select count(*) from chat_message where turn_id = $1', [started.body.id])).rows[0].count)).toBe(0)
  })

  it('compacts a chat turn that moved no money; the turn and the agent\'s messages answer as before', async () => {
    model.mock.on({ userMessage: 'hello there' }, { content: 'Hi.', usage: { prompt_tokens: 50, completion_tokens: 2 } })
    const sent = await api('POST', `/agents/${agentId}/chat`, { message: 'hello there' })
    expect(sent.status).toBeLessThan(300)
    let turn: Record<string, unknown> = {}
    await waitFor(async () => (turn = (await api('GET', `/agents/${agentId}/chat/${sent.body.id}`)).body).status === 'completed', 20_000)
    const messages = (await api('GET', `/agents/${agentId}/messages`)).body
    await waitFor(async () => (await ops('GET', `/ops/actors/${sent.body.id}`)).body.compactedAt !== null, 15_000)
    const context = (await ops('GET', `/ops/actors/${sent.body.id}/timeline`)).body.actor.snapshot.context
    for (const dropped of ['transcript', 'system', 'turnId', 'accountId', 'message', 'round']) expect(context, dropped).not.toHaveProperty(dropped)
    expect(withoutMeta((await api('GET', `/agents/${agentId}/chat/${sent.body.id}`)).body)).toEqual(withoutMeta(turn))
    expect(withoutMeta((await api('GET', `/agents/${agentId}/messages`)).body)).toEqual(withoutMeta(messages))
  })

  it('keeps a run that started a swap for the long window', async () => {
    model.mock.on({ userMessage: 'buy a little', hasToolResult: false }, { toolCalls: [{ id: 'call_buy', name: 'swap_execute', arguments: '{"tokenIn":"ETH","tokenOut":"USDC","amountIn":"0.001"}' }], usage: { prompt_tokens: 100, completion_tokens: 10 } })
    model.mock.onToolResult('call_buy', { content: 'Bought.', usage: { prompt_tokens: 100, completion_tokens: 3 } })
    const started = await api('POST', `/agents/${agentId}/runs`, { goal: 'buy a little' })
    expect(started.status).toBe(202)
    expect((await runEnds(started.body.id)).status).toBe('completed')
    const quiet = (await api('POST', `/agents/${agentId}/runs`, { goal: 'look around' })).body.id
    await runEnds(quiet)
    // The quiet run ended after the swapping one and is compacted; the swapping one is not.
    await waitFor(async () => (await ops('GET', `/ops/actors/${quiet}`)).body.compactedAt !== null, 15_000)
    expect((await ops('GET', `/ops/actors/${started.body.id}`)).body.compactedAt).toBeNull()
    expect((await ops('GET', `/ops/actors/${started.body.id}/timeline`)).body.timeline.length).toBeGreaterThan(2)
    // The swapping run's messages stay; the quiet one's went with its history.
    const byTurn = async (id: string) => Number((await app.services.pool.query('select count(*) from chat_message where turn_id = $1', [id])).rows[0].count)
    expect(await byTurn(started.body.id)).toBeGreaterThanOrEqual(3)
    expect(await byTurn(quiet)).toBe(0)
  })
})

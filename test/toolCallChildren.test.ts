import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { startTestApp, type Api, type ApiResponse, type TestApp } from './support/app.ts'
import { startModelServer, type ModelServer } from './support/modelServer.ts'
import { waitFor } from './support/waitFor.ts'
import { createdWithParentsRecord } from './support/childCommit.ts'
import { answerAt as scriptedAnswerAt, chatTurnEnds, lastToolResults as lastToolResultsOf, swapCall } from './support/scriptedChat.ts'

/**
 * A fund-moving tool call of a chat turn or a run is a child wallet operation of it, keyed by the
 * tool-call effect's id: open models that number every call `call_0` still get one swap per call
 * and each call its own result. Real server, real anvil, the real openai SDK against a scripted
 * model server. (`call_0` in two rounds of a chat turn, and a turn waiting in `acting` for a swap
 * that confirms after the HTTP wait, are shown on the service as a child process:
 * automationScenarios.test.ts, 4a and 4b.)
 */
let model: ModelServer
let app: TestApp
let api: Api
let trader: string

const q = async (sql: string, values: unknown[] = []) => (await app.services.pool.query(sql, values)).rows
const rpc = (method: string, params: unknown[] = []) => app.services.chain!.publicClient.request({ method: method as never, params: params as never })
const sentTxs = async () => (await q(`select count(*)::int as n from chain_tx where agent_id = $1`, [trader]))[0].n as number
const answerAt = (text: string, n: number, answer: Parameters<ModelServer['mock']['on']>[1]) => scriptedAnswerAt(model, text, n, answer)
const lastToolResults = () => lastToolResultsOf(model)
const swap = swapCall

const turnEnds = (res: ApiResponse) => chatTurnEnds(api, trader, res)

async function runEnds(runId: string) {
  let run: any
  await waitFor(async () => {
    run = (await api('GET', `/runs/${runId}`)).body
    return !['queued', 'running'].includes(run.status)
  }, 30_000)
  return run
}

beforeAll(async () => {
  model = await startModelServer()
  app = await startTestApp({ OPENAI_BASE_URL: model.baseUrl, OPENAI_API_KEY: 'test-key', CHAT_WAIT_SECONDS: '2' }, { withChain: true })
  ;({ api } = await app.account())
  trader = (await api('POST', '/agents', { name: 'trader', skills: ['trading'] })).body.id
  expect((await api('POST', '/dev/faucet', { agentId: trader, eth: '5' })).status).toBe(200)
})
afterAll(async () => {
  await rpc('evm_setAutomine', [true]).catch(() => {})
  await app?.close()
  await model?.stop()
})
beforeEach(() => model.mock.reset())

describe('tool calls that move funds are child operations keyed by their effect', () => {
  it('two calls named call_0 in one answer of a chat turn: two swaps, two results', async () => {
    const text = 'twice in one answer'
    answerAt(text, 0, { toolCalls: [swap('call_0', '0.011'), swap('call_0', '0.012')] })
    answerAt(text, 2, { content: 'Both done.' })
    const before = await sentTxs()
    const turn = await turnEnds(await api('POST', `/agents/${trader}/chat`, { message: text }))
    expect(turn.status).toBe('completed')
    expect(await sentTxs()).toBe(before + 2)
    expect(turn.toolCalls.map((c: any) => [c.id, c.status, c.result.amountIn, c.result.status])).toEqual([
      ['call_0', 'ok', '0.011', 'confirmed'],
      ['call_0', 'ok', '0.012', 'confirmed'],
    ])
    expect(new Set(turn.toolCalls.map((c: any) => c.result.txHash)).size).toBe(2)
    // Each call's tool message is kept in the history under its own key.
    const messages = (await api('GET', `/agents/${trader}/messages?limit=4`)).body.messages
    expect(messages.filter((m: { role: string }) => m.role === 'tool')).toHaveLength(2)
  })

  it('a run whose model reuses call_0 in one step and across steps: one swap per call, none refused', async () => {
    const goal = 'run reusing call_0'
    answerAt(goal, 0, { toolCalls: [swap('call_0', '0.013'), swap('call_0', '0.014')] })
    answerAt(goal, 2, { toolCalls: [swap('call_0', '0.015')] })
    answerAt(goal, 3, { content: 'Three swaps made.' })
    const before = await sentTxs()
    const started = await api('POST', `/agents/${trader}/runs`, { goal })
    expect(started.status).toBe(202)
    const run = await runEnds(started.body.id)
    expect(run.status, JSON.stringify(run.error)).toBe('completed')
    expect(await sentTxs()).toBe(before + 3)
    const calls = run.steps.flatMap((s: { toolCalls: any[] }) => s.toolCalls)
    expect(calls.map((c: any) => [c.id, c.status, c.result.amountIn, c.result.status])).toEqual([
      ['call_0', 'ok', '0.013', 'confirmed'],
      ['call_0', 'ok', '0.014', 'confirmed'],
      ['call_0', 'ok', '0.015', 'confirmed'],
    ])
    expect(new Set(calls.map((c: any) => c.txHash)).size).toBe(3)
  })

  it('a launch a chat turn asks for is its child: the model is told it went live, with the token address', async () => {
    const launcher = (await api('POST', '/agents', { name: 'launcher', skills: ['token-launch'] })).body.id
    expect((await api('POST', '/dev/faucet', { agentId: launcher, eth: '2' })).status).toBe(200)
    const text = 'launch a cat coin'
    const launch = { id: 'call_0', name: 'launch_token', arguments: JSON.stringify({ venue: 'venue-a', symbol: 'KIDCAT', name: 'Kid Cat', quote: 'ETH' }) }
    answerAt(text, 0, { toolCalls: [launch] })
    answerAt(text, 1, { content: 'Launched.' })
    const res = await api('POST', `/agents/${launcher}/chat`, { message: text })
    let turn = res.body
    await waitFor(async () => ['completed', 'failed'].includes((turn = (await api('GET', `/agents/${launcher}/chat/${res.body.id}`)).body).status), 30_000)
    expect(turn.status).toBe('completed')
    const [call] = turn.toolCalls
    expect(call).toMatchObject({ id: 'call_0', status: 'ok', result: { status: 'live', symbol: 'KIDCAT', tokenAddress: expect.stringMatching(/^0x[0-9a-f]{40}$/) } })
    expect((await q(`select parent_id, status from actor where id = $1`, [call.result.id]))[0]).toEqual({ parent_id: res.body.id, status: 'live' })
    expect(await createdWithParentsRecord(q, [call.result.id], 'tool.started')).toEqual([{ parent_id: res.body.id, same: true }])
    expect(lastToolResults()).toMatchObject([{ status: 'live', tokenAddress: call.result.tokenAddress }])
  })
})

import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { startTestApp, type Api, type TestApp } from './support/app.ts'
import { startModelServer, type ModelServer } from './support/modelServer.ts'
import { waitFor } from './support/waitFor.ts'

let model: ModelServer
let app: TestApp
let api: Api
let accountId: string
let trader: string
const logLines: string[] = []

const q = async (sql: string, values: unknown[] = []) => (await app.services.pool.query(sql, values)).rows
const sentTxs = async (agentId: string) => (await q(`select count(*)::int as n from chain_tx where agent_id = $1`, [agentId]))[0].n as number
const ended = (status: string) => !['queued', 'running'].includes(status)
const runEnds = async (runId: string) => {
  let run: { status: string } = { status: 'running' }
  await waitFor(async () => {
    run = (await api('GET', `/runs/${runId}`)).body
    return ended(run.status)
  }, 30_000)
  return (await api('GET', `/runs/${runId}`)).body
}

beforeAll(async () => {
  model = await startModelServer()
  app = await startTestApp({ OPENAI_BASE_URL: model.baseUrl, OPENAI_API_KEY: 'test-key', LOG_LEVEL: 'error' }, { withChain: true, logLines })
  ;({ api, accountId } = await app.account())
  trader = (await api('POST', '/agents', { name: 'runner', skills: ['trading'] })).body.id
  expect((await api('POST', '/dev/faucet', { agentId: trader, eth: '5' })).status).toBe(200)
})
afterAll(async () => {
  await app?.close()
  await model?.stop()
})
beforeEach(() => model.mock.reset())

describe('autonomous runs (real SDK against the scripted model server)', () => {
  it('runs three steps, the second swapping: completed, one swap on chain, steps, tx hash and credits recorded', async () => {
    const goal = 'three steps: look, swap, report'
    model.mock.on({ userMessage: goal, hasToolResult: false }, { toolCalls: [{ id: 'call_look', name: 'get_portfolio', arguments: '{}' }], usage: { prompt_tokens: 500, completion_tokens: 20 } })
    model.mock.onToolResult('call_look', { toolCalls: [{ id: 'call_swap', name: 'swap_execute', arguments: '{"tokenIn":"ETH","tokenOut":"USDC","amountIn":"0.01"}' }], usage: { prompt_tokens: 700, completion_tokens: 30 } })
    model.mock.onToolResult('call_swap', { content: 'Swapped 0.01 ETH to USDC.', usage: { prompt_tokens: 900, completion_tokens: 10 } })
    const before = await sentTxs(trader)
    const res = await api('POST', `/agents/${trader}/runs`, { goal, maxSteps: 5 })
    expect(res.status, JSON.stringify(res.body) + logLines.join('\n')).toBe(202)
    expect(res.body).toMatchObject({ agentId: trader, goal, status: 'running', budgets: { maxSteps: 5, maxCredits: 500, maxSeconds: 600 } })

    const run = await runEnds(res.body.id)
    expect(run.status, JSON.stringify(run)).toBe('completed')
    expect(run.steps).toHaveLength(3)
    expect(run.steps[0].toolCalls).toMatchObject([{ id: 'call_look', name: 'get_portfolio', status: 'ok' }])
    const [swap] = run.steps[1].toolCalls
    expect(swap).toMatchObject({ id: 'call_swap', name: 'swap_execute', arguments: { tokenIn: 'ETH', tokenOut: 'USDC', amountIn: '0.01' }, status: 'ok', result: { status: 'confirmed' } })
    expect(run.steps[2]).toMatchObject({ modelCall: { content: 'Swapped 0.01 ETH to USDC.' }, toolCalls: [] })
    expect(run.summary).toBe('Swapped 0.01 ETH to USDC.')
    expect(await sentTxs(trader)).toBe(before + 1)
    const [tx] = await q(`select hash from chain_tx where agent_id = $1 order by created_at desc limit 1`, [trader])
    expect(swap.txHash).toBe(tx.hash)
    // Each step's times, in order: asked for, answered, its tool calls done, then the next step.
    const times = run.steps.flatMap((st: { startedAt: string; modelCall: { answeredAt: string }; toolCalls: Array<{ doneAt: string }> }) => [
      st.startedAt,
      st.modelCall.answeredAt,
      ...st.toolCalls.map((c) => c.doneAt),
    ])
    expect(times).toHaveLength(8)
    for (const t of times) expect(t).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
    expect([...times].sort()).toEqual(times)
    expect(run.steps[0].startedAt).toBe(run.createdAt)
    expect(run.steps[1].startedAt).toBe(run.steps[0].toolCalls[0].doneAt)

    // One charge per model call (ref = its effect id); the run's credits are their sum; the ledger adds up.
    // The ledger as GET /billing/transactions reads it: the pending charges folded in first.
    await q('select credits_fold(id) from account')
    const charges = await q(`select credits from credit_entry where account_id = $1 and kind = 'model_usage' and ref like $2`, [accountId, `${run.id}:%`])
    expect(charges).toHaveLength(3)
    expect(run.credits).toBe(-charges.reduce((s, c) => s + Number(c.credits), 0))
    expect(run.used).toMatchObject({ steps: 3, credits: run.credits })
    expect(run.steps.reduce((s: number, st: { modelCall: { credits: number } }) => s + st.modelCall.credits, 0)).toBe(run.credits)
    const [{ credits, credits_reserved, ledger }] = await q(
      `select a.credits, credits_held(a.id) as credits_reserved, (select sum(credits) from credit_entry e where e.account_id = a.id) as ledger from account a where a.id = $1`,
      [accountId],
    )
    expect(Number(credits)).toBe(Number(ledger))
    expect(Number(credits_reserved)).toBe(0)

    // The steps are readable as messages too; the run is listed.
    const history = await api('GET', `/agents/${trader}/messages?limit=6`)
    expect(history.body.messages.map((m: { role: string }) => m.role)).toEqual(['assistant', 'tool', 'assistant', 'tool', 'assistant', 'user'])
    const list = await api('GET', `/agents/${trader}/runs?status=completed`)
    expect(list.status).toBe(200)
    expect(list.body.runs.map((r: { id: string }) => r.id)).toContain(run.id)
    expect((await api('GET', `/agents/${trader}/runs?status=failed`)).body.runs).toEqual([])
  })

  it('refuses a second run while one is in progress (409 run_in_progress), and replays an Idempotency-Key', async () => {
    const goal = 'slow goal'
    model.mock.on({ userMessage: goal, hasToolResult: false }, { content: 'Nothing to do.' }, { chaos: { latencyMs: 1500 } })
    const first = await api('POST', `/agents/${trader}/runs`, { goal }, { 'Idempotency-Key': 'run-key-1' })
    expect(first.status).toBe(202)
    const again = await api('POST', `/agents/${trader}/runs`, { goal }, { 'Idempotency-Key': 'run-key-1' })
    expect(again.status).toBe(202)
    expect(again.body.id).toBe(first.body.id)
    const second = await api('POST', `/agents/${trader}/runs`, { goal: 'another' })
    expect(second.status).toBe(409)
    expect(second.body.code).toBe('run_in_progress')
    expect((await runEnds(first.body.id)).status).toBe('completed')
    expect((await q(`select count(*)::int as n from actor where kind = 'run' and id = $1`, [first.body.id]))[0].n).toBe(1)
  })

  it('refuses budgets over their ceilings (422) and another account reading the run (404)', async () => {
    const res = await api('POST', `/agents/${trader}/runs`, { goal: 'x', maxSteps: 51 })
    expect(res.status).toBe(422)
    expect(res.body.field_errors).toHaveProperty('maxSteps')
    const other = await app.account()
    const listed = (await api('GET', `/agents/${trader}/runs?limit=1`)).body.runs[0]
    expect((await other.api('GET', `/runs/${listed.id}`)).status).toBe(404)
    expect((await other.api('POST', `/runs/${listed.id}/stop`)).status).toBe(404)
  })
})

const rpc = (method: string, params: unknown[] = []) => app.services.chain!.publicClient.request({ method: method as never, params: params as never })
const modelCalls = () => model.mock.getRequests().length

describe('stopping a run and its budgets', () => {
  it('stop during a model call: the run ends stopped, the answer is recorded and billed but not acted on', async () => {
    const goal = 'slow swap goal'
    model.mock.on(
      { userMessage: goal, hasToolResult: false },
      { toolCalls: [{ id: 'call_late', name: 'swap_execute', arguments: '{"tokenIn":"ETH","tokenOut":"USDC","amountIn":"0.01"}' }], usage: { prompt_tokens: 100, completion_tokens: 10 } },
      { chaos: { latencyMs: 1500 } },
    )
    const before = await sentTxs(trader)
    const started = await api('POST', `/agents/${trader}/runs`, { goal })
    expect(started.status).toBe(202)
    // The model call is claimed by a worker and waiting for the slow answer (recorded by the server only once answered).
    await waitFor(async () => (await q(`select 1 from effect where actor_id = $1 and kind = 'run.model' and claimed_by is not null and status <> 'done'`, [started.body.id])).length === 1, 10_000)
    expect(modelCalls()).toBe(0)
    const stopped = await api('POST', `/runs/${started.body.id}/stop`)
    expect(stopped.status).toBe(200)
    expect(stopped.body, JSON.stringify(stopped.body)).toMatchObject({ status: 'stopped', stoppedInFlight: { modelCall: true, toolCalls: [] } })
    expect(stopped.body.steps).toHaveLength(1)
    expect(stopped.body.steps[0]).toMatchObject({ modelCall: { status: 'done', acted: false }, toolCalls: [{ id: 'call_late', status: 'skipped', txHash: null }] })
    expect(await sentTxs(trader)).toBe(before)
    expect(modelCalls()).toBe(1)
    // The ledger as GET /billing/transactions reads it: the pending charges folded in first.
    await q('select credits_fold(id) from account')
    const charges = await q(`select credits from credit_entry where kind = 'model_usage' and ref like $1`, [`${started.body.id}:%`])
    expect(charges).toHaveLength(1)
    expect(stopped.body.credits).toBe(-Number(charges[0].credits))
    // Stopping an ended run answers it as it is.
    expect((await api('POST', `/runs/${started.body.id}/stop`)).body).toMatchObject({ status: 'stopped' })
  })

  it('stop during a tool call: the swap completes and is recorded, no further step', async () => {
    const goal = 'swap then stop'
    model.mock.on({ userMessage: goal, hasToolResult: false }, { toolCalls: [{ id: 'call_held', name: 'swap_execute', arguments: '{"tokenIn":"ETH","tokenOut":"USDC","amountIn":"0.01"}' }] })
    model.mock.onToolResult('call_held', { content: 'must not be asked' })
    const before = await sentTxs(trader)
    await rpc('evm_setAutomine', [false])
    let runId: string
    try {
      const started = await api('POST', `/agents/${trader}/runs`, { goal })
      expect(started.status).toBe(202)
      runId = started.body.id
      // The swap's transaction is sent and waits to be mined: the tool call is in flight.
      await waitFor(async () => (await sentTxs(trader)) === before + 1, 10_000)
      const stopping = api('POST', `/runs/${runId}/stop`)
      await waitFor(async () => (await api('GET', `/runs/${runId}`)).body.stoppedInFlight !== null, 10_000)
      await rpc('evm_setAutomine', [true])
      await rpc('evm_mine')
      const stopped = await stopping
      expect(stopped.status).toBe(200)
      expect(stopped.body).toMatchObject({ status: 'stopped', stoppedInFlight: { modelCall: false, toolCalls: ['call_held'] } })
    } finally {
      await rpc('evm_setAutomine', [true])
    }
    const run = await runEnds(runId)
    expect(run.steps).toHaveLength(1)
    expect(run.steps[0].toolCalls).toMatchObject([{ id: 'call_held', status: 'ok', result: { status: 'confirmed' } }])
    const [tx] = await q(`select hash from chain_tx where agent_id = $1 order by created_at desc limit 1`, [trader])
    expect(run.steps[0].toolCalls[0].txHash).toBe(tx.hash)
    expect(await sentTxs(trader)).toBe(before + 1)
    expect(modelCalls()).toBe(1)
  })

  it('maxSteps ends a run budget_exhausted before the step past it', async () => {
    const goal = 'look forever'
    model.mock.on({ userMessage: goal, hasToolResult: false }, { toolCalls: [{ id: 'call_s1', name: 'get_portfolio', arguments: '{}' }] })
    model.mock.onToolResult('call_s1', { toolCalls: [{ id: 'call_s2', name: 'get_portfolio', arguments: '{}' }] })
    model.mock.onToolResult('call_s2', { toolCalls: [{ id: 'call_s3', name: 'get_portfolio', arguments: '{}' }] })
    const started = await api('POST', `/agents/${trader}/runs`, { goal, maxSteps: 2 })
    const run = await runEnds(started.body.id)
    expect(run).toMatchObject({ status: 'budget_exhausted', exhaustedBudget: 'maxSteps', used: { steps: 2 } })
    expect(run.steps.map((s: { toolCalls: Array<{ id: string; status: string }> }) => s.toolCalls.map((c) => [c.id, c.status]))).toEqual([[['call_s1', 'ok']], [['call_s2', 'ok']]])
    expect(modelCalls()).toBe(2)
  })

  it('maxSeconds ends a run budget_exhausted at the step after its deadline passed (a durable timer)', async () => {
    const goal = 'take your time'
    // The first answer comes two seconds after the one-second deadline (room for a late timer on a busy machine); the step it asks for still runs, the next one does not.
    model.mock.on({ userMessage: goal, hasToolResult: false }, { toolCalls: [{ id: 'call_t1', name: 'get_portfolio', arguments: '{}' }] }, { chaos: { latencyMs: 3000 } })
    model.mock.onToolResult('call_t1', { toolCalls: [{ id: 'call_t2', name: 'get_portfolio', arguments: '{}' }] })
    const started = await api('POST', `/agents/${trader}/runs`, { goal, maxSeconds: 1 })
    expect(started.body.budgets).toMatchObject({ maxSeconds: 1 })
    const run = await runEnds(started.body.id)
    expect(run).toMatchObject({ status: 'budget_exhausted', exhaustedBudget: 'maxSeconds', used: { steps: 1 } })
    expect(run.steps.map((s: { toolCalls: Array<{ id: string; status: string }> }) => s.toolCalls.map((c) => [c.id, c.status]))).toEqual([[['call_t1', 'ok']]])
    expect(modelCalls()).toBe(1)
  })

  it('maxCredits ends a run budget_exhausted once the credits spent reach it', async () => {
    const goal = 'spend credits'
    // 400,000 prompt tokens of gpt-4o-mini = 60 credits a call: under 100 after one, over after two.
    const usage = { prompt_tokens: 400_000, completion_tokens: 0 }
    model.mock.on({ userMessage: goal, hasToolResult: false }, { toolCalls: [{ id: 'call_c1', name: 'get_portfolio', arguments: '{}' }], usage })
    model.mock.onToolResult('call_c1', { toolCalls: [{ id: 'call_c2', name: 'get_portfolio', arguments: '{}' }], usage })
    model.mock.onToolResult('call_c2', { toolCalls: [{ id: 'call_c3', name: 'get_portfolio', arguments: '{}' }], usage })
    const started = await api('POST', `/agents/${trader}/runs`, { goal, maxCredits: 100 })
    const run = await runEnds(started.body.id)
    expect(run).toMatchObject({ status: 'budget_exhausted', exhaustedBudget: 'maxCredits', credits: 120, used: { steps: 2, credits: 120 } })
    expect(modelCalls()).toBe(2)
  })
})

describe("a run's first model call, held in the run's own insert", () => {
  let firstHold = 0
  it('is held once, under that call, when the run is created; the call holds nothing more and its charge ends the hold', async () => {
    const goal = 'held first call'
    model.mock.on({ userMessage: goal, hasToolResult: false }, { content: 'done', usage: { prompt_tokens: 100, completion_tokens: 5 } }, { chaos: { latencyMs: 800 } })
    const started = await api('POST', `/agents/${trader}/runs`, { goal })
    expect(started.status).toBe(202)
    const [call] = await q(`select id from effect where actor_id = $1 and kind = 'run.model'`, [started.body.id])
    // Made by the run's insert (the same transaction as the run's row), under the call's effect id.
    const holds = await q(
      `select r.credits, r.ref, r.xmin::text = a.xmin::text as with_run from credit_reservation r, actor a where a.id = $1 and r.account_id = $2`,
      [started.body.id, accountId],
    )
    expect(holds).toEqual([{ credits: expect.any(String), ref: call.id, with_run: true }])
    firstHold = Number(holds[0].credits)
    expect(firstHold).toBeGreaterThan(0)
    const run = await runEnds(started.body.id)
    expect(run.status).toBe('completed')
    // The ledger as GET /billing/transactions reads it: the pending charges folded in first.
    await q('select credits_fold(id) from account')
    const charges = await q(`select credits from credit_entry where kind = 'model_usage' and ref = $1`, [call.id])
    expect(charges).toHaveLength(1)
    expect(await q(`select id from credit_reservation where account_id = $1`, [accountId])).toEqual([])
    expect(Number((await q(`select credits_held(id) as credits_reserved from account where id = $1`, [accountId]))[0].credits_reserved)).toBe(0)
  })

  it('a run the account cannot hold is refused 402 with the credits available, and nothing is created', async () => {
    const { api: poor, accountId: poorId } = await app.account({ name: 'poor' })
    const agent = (await poor('POST', '/agents', { name: 'poor runner', skills: ['trading'] })).body.id
    // One credit short of the first call's worst case (the same goal length: the same hold).
    await q(`update account set credits = $2 where id = $1`, [poorId, firstHold - 1])
    const refused = await poor('POST', `/agents/${agent}/runs`, { goal: 'held first call' })
    expect(refused.status, JSON.stringify(refused.body)).toBe(402)
    expect(refused.body).toMatchObject({ code: 'insufficient_credits' })
    expect(refused.body.message ?? refused.body.error?.message ?? JSON.stringify(refused.body)).toContain(`${firstHold} needed, ${firstHold - 1} available`)
    expect(await q(`select id from actor where kind = 'run' and account_id = $1`, [poorId])).toEqual([])
    expect(await q(`select id from credit_reservation where account_id = $1`, [poorId])).toEqual([])
  })
})

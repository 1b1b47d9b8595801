import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Hash } from 'viem'
import { startTestApp, type Api, type TestApp } from './support/app.ts'
import { startModelServer, type ModelServer } from './support/modelServer.ts'
import { waitFor } from './support/waitFor.ts'

/**
 * An `agent_prompt` automation's `max_spend_usd` on the real app, Postgres, anvil and the
 * scripted model server: the swaps of the run a firing starts count against the automation's
 * budget, checked with the agent's daily cap; the swap that would pass it is refused and the
 * model is told why.
 */
let model: ModelServer
let app: TestApp
let api: Api

const q = async (sql: string, values: unknown[] = []) => (await app.services.pool.query(sql, values)).rows
const sentTxs = async (agentId: string) => (await q(`select hash from chain_tx where agent_id = $1 order by created_at`, [agentId])).map((r) => r.hash as Hash)
const toolMessages = () =>
  model.mock.getRequests().flatMap((r) => ((r.body as { messages?: Array<{ role: string; content: string }> } | null)?.messages ?? []).filter((m) => m.role === 'tool'))

beforeAll(async () => {
  model = await startModelServer()
  app = await startTestApp({ AUTOMATION_MIN_INTERVAL_SECONDS: '1', OPENAI_BASE_URL: model.baseUrl, OPENAI_API_KEY: 'test-key', LOG_LEVEL: 'error' }, { withChain: true })
  ;({ api } = await app.account())
})
afterAll(async () => {
  await app?.close()
  await model?.stop()
})

describe('agent_prompt automations and max_spend_usd', () => {
  it("a run started by a firing: the swap that fits the automation's budget goes through, the next is refused and the model is told", async () => {
    const agent: string = (await api('POST', '/agents', { name: 'prompted', skills: ['trading'] })).body.id
    expect((await api('POST', '/dev/faucet', { agentId: agent, eth: '1' })).status).toBe(200)
    expect((await api('POST', `/agents/${agent}/start`)).status).toBe(200)
    // A read-only quote prices the swap; the budget fits one of these swaps, not two.
    const quote = (await api('POST', '/swap/quote', { agentId: agent, tokenIn: 'ETH', tokenOut: 'USDC', amountIn: '0.002' })).body
    const budget = (Number(quote.valueInUsd) * 1.5).toFixed(2)
    const prompt = 'buy USDC twice'
    const swap = '{"tokenIn":"ETH","tokenOut":"USDC","amountIn":"0.002"}'
    model.mock.on({ userMessage: prompt, hasToolResult: false }, { toolCalls: [{ id: 'call_swap1', name: 'swap_execute', arguments: swap }] })
    model.mock.onToolResult('call_swap1', { toolCalls: [{ id: 'call_swap2', name: 'swap_execute', arguments: swap }] })
    model.mock.onToolResult('call_swap2', { content: 'One swap done; the second was over budget.' })

    const created = await api('POST', '/automations', {
      agent_id: agent, name: 'prompted buyer', trigger: { type: 'interval', everySeconds: 3600, startAt: new Date(Date.now() + 3_600_000).toISOString() },
      action: { type: 'agent_prompt', prompt }, max_spend_usd: budget,
    })
    expect(created.status, JSON.stringify(created.body)).toBe(201)
    expect(created.body).toMatchObject({ actionType: 'agent_prompt', maxSpendUsd: budget, status: 'armed' })
    const before = await sentTxs(agent)
    expect((await api('POST', `/automations/${created.body.id}/trigger`)).status).toBe(200)

    // The firing is recorded with the run it started; the run names the automation.
    let automation: any
    await waitFor(async () => (automation = (await api('GET', `/automations/${created.body.id}`)).body).firings.length === 1, 30_000)
    expect(automation).toMatchObject({ status: 'armed', runCount: 1, lastError: null })
    const runId: string = automation.firings[0].childId
    expect(automation.firings[0]).toMatchObject({ number: 1, source: 'manual', outcome: 'ok', childId: expect.any(String) })
    expect(await q(`select parent_id, snapshot->'context'->>'automationId' as automation from actor where id = $1 and kind = 'run'`, [runId])).toEqual([{ parent_id: agent, automation: created.body.id }])
    // The firing ends with its run (the automation hears the run's end), not when the run starts.
    const run = (await api('GET', `/runs/${runId}`)).body
    expect(run).toMatchObject({ status: 'completed', trigger: 'automation', summary: 'One swap done; the second was over budget.' })
    expect(run.steps[0].toolCalls[0]).toMatchObject({ id: 'call_swap1', status: 'ok', result: { status: 'confirmed' } })
    const refused = run.steps[1].toolCalls[0]
    expect(refused).toMatchObject({ id: 'call_swap2', status: 'refused', result: { code: 'automation_budget_exhausted' } })
    expect(refused.result.error).toContain(`over its max_spend_usd of ${budget}`)
    // The model's tool result for the second swap is the refusal.
    const second = toolMessages().find((m) => m.content.includes('automation_budget_exhausted'))
    expect(second?.content).toContain('max_spend_usd')

    // Only the allowed swap was recorded and sent; its hash is the run's and it succeeded on chain.
    const ops = await q(`select w.usd_value::float8 as usd, x.status, x.snapshot->'context'->>'txHash' as hash from wallet_op w join actor x on x.id = w.id where w.parent_id = $1`, [runId])
    expect(ops).toEqual([{ usd: expect.any(Number), status: 'confirmed', hash: run.steps[0].toolCalls[0].txHash }])
    expect(ops[0].usd).toBeLessThanOrEqual(Number(budget))
    const after = await sentTxs(agent)
    expect(after).toEqual([...before, ops[0].hash])
    const receipt = await app.services.chain!.publicClient.getTransactionReceipt({ hash: ops[0].hash })
    expect(receipt.status).toBe('success')

    // The budget lowered to what was spent: the next firing starts no run, fails naming the
    // budget, and the automation completes.
    const spent = (Math.floor(ops[0].usd * 100) / 100).toFixed(2)
    expect((await api('PATCH', `/automations/${created.body.id}`, { max_spend_usd: spent })).status).toBe(200)
    expect((await api('POST', `/automations/${created.body.id}/trigger`)).status).toBe(200)
    await waitFor(async () => (automation = (await api('GET', `/automations/${created.body.id}`)).body).firings.length === 2, 30_000)
    expect(automation).toMatchObject({ status: 'completed', completedReason: 'max_spend_reached' })
    expect(automation.firings.find((f: { number: number }) => f.number === 2)).toMatchObject({ number: 2, outcome: 'failed', reason: expect.stringContaining('automation_budget_exhausted') })
    expect(automation.lastError).toContain(`of its max_spend_usd of ${spent}: no run is started`)
    const runs = await q(`select id from actor where kind = 'run' and snapshot->'context'->>'automationId' = $1`, [created.body.id])
    expect(runs).toEqual([{ id: runId }])
    expect(await sentTxs(agent)).toEqual(after)
  })
})

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Address } from 'viem'
import { startTestApp, type Api, type TestApp } from './support/app.ts'
import { automationUntil } from './support/automations.ts'
import { readSse } from './support/sse.ts'
import { createAutomationEffects } from '../src/actors/automation/automation.effects.ts'
import { createToolPort } from '../src/tools/toolPort.ts'
import { AUTOMATION_FIRE } from '../src/actors/automation/automation.machine.ts'
import type { EffectContext, EffectRow } from '../src/actors/runtime/actorKind.ts'
import { createAutomationsStore } from '../src/adapters/db/automations.store.ts'

/**
 * Automations end to end on the real app, Postgres and anvil: a DCA fires on its grid, once per
 * firing, and completes; budgets hold; validation names each bad field; a limit order fires once
 * when another wallet's swap pushes the price across; a sniper buys a matching launch.
 */
let app: TestApp
let api: Api
let apiKey: string
let trader: string

const q = async (sql: string, values: unknown[] = []) => (await app.services.pool.query(sql, values)).rows
const sentTxs = async (agentId: string) => (await q(`select count(*)::int as n from chain_tx where agent_id = $1`, [agentId]))[0].n as number
const dca = (over: Record<string, unknown> = {}) => ({
  agent_id: trader, name: 'eth to usdc', kind: 'dca',
  dca: { tokenIn: 'ETH', tokenOut: 'USDC', amountPerRun: '0.001', everySeconds: 2, maxRuns: 5, ...over },
})

const until = (id: string, done: (a: any) => boolean, timeoutMs?: number) => automationUntil(api, id, done, timeoutMs)

/** An agent with ETH from the faucet, started unless asked otherwise. */
async function fundedAgent(name: string, { eth = '1', start = true } = {}): Promise<string> {
  const id: string = (await api('POST', '/agents', { name, skills: ['trading'] })).body.id
  expect((await api('POST', '/dev/faucet', { agentId: id, eth })).status).toBe(200)
  if (start) expect((await api('POST', `/agents/${id}/start`)).status).toBe(200)
  return id
}

beforeAll(async () => {
  app = await startTestApp({ AUTOMATION_MIN_INTERVAL_SECONDS: '1' }, { withChain: true })
  ;({ api, apiKey } = await app.account())
  trader = await fundedAgent('dca-bot', { eth: '5' })
})
afterAll(async () => {
  await app?.close()
})

describe('automations', () => {
  it('a DCA every 2 s for 5 firings: 5 swaps on chain, completed, one per firing, balances match the receipts', async () => {
    const usdc = app.services.chain!.manifest.contracts.usdc as Address
    const before = await sentTxs(trader)
    const created = await api('POST', '/automations', dca(), { 'idempotency-key': 'dca-1' })
    expect(created.status, JSON.stringify(created.body)).toBe(201)
    expect(created.body).toMatchObject({ agentId: trader, kind: 'dca', status: expect.stringMatching(/armed|executing/), triggerType: 'interval', actionType: 'tool_call', runCount: expect.any(Number) })
    // A blind retry of the creation creates nothing new.
    const again = await api('POST', '/automations', dca(), { 'idempotency-key': 'dca-1' })
    expect(again.body.id).toBe(created.body.id)
    expect((await api('GET', `/automations?agent_id=${trader}`)).body.automations).toHaveLength(1)

    const done = await until(created.body.id, (a) => a.status === 'completed', 40_000)
    expect(done).toMatchObject({ runCount: 5, completedReason: 'max_firings_reached', lastError: null, nextRunAt: null })
    expect(done.firings.map((f: { number: number; outcome: string }) => [f.number, f.outcome])).toEqual([[5, 'ok'], [4, 'ok'], [3, 'ok'], [2, 'ok'], [1, 'ok']])
    expect(await sentTxs(trader)).toBe(before + 5)
    // Each firing's swap is the automation's child, and its tx hash is the one on chain.
    const ops = await q(`select w.id, x.status, x.snapshot->'context'->>'txHash' as hash from wallet_op w join actor x on x.id = w.id where w.parent_id = $1 order by w.created_at`, [created.body.id])
    expect(ops.map((o) => o.status)).toEqual(['confirmed', 'confirmed', 'confirmed', 'confirmed', 'confirmed'])
    expect(new Set(done.firings.map((f: { txHash: string }) => f.txHash))).toEqual(new Set(ops.map((o) => o.hash)))
    // The firings kept to their grid (ticks every 2 s from the creation): the k-th swap started no
    // earlier than its tick (a firing that runs past the next tick delays it, never brings one
    // forward), and none was a catch-up.
    const grid = Date.parse(created.body.createdAt)
    const starts = (await q(`select extract(epoch from w.created_at) * 1000 as ms from wallet_op w where w.parent_id = $1 order by w.created_at`, [created.body.id])).map((r) => Number(r.ms))
    for (let k = 1; k < starts.length; k++) expect(starts[k]! - grid).toBeGreaterThanOrEqual(k * 2000 - 50)
    expect(done.firings.filter((f: { catchUp: boolean }) => f.catchUp)).toEqual([])
    // The USDC the wallet holds is what the five receipts say it received.
    const received = await q(`select coalesce(sum((x.snapshot->'context'->'result'->>'amountOutBaseUnits')::numeric), 0)::text as n from wallet_op w join actor x on x.id = w.id where w.parent_id = $1`, [created.body.id])
    const balance = await app.services.chain!.publicClient.readContract({ address: usdc, abi: [{ type: 'function', name: 'balanceOf', stateMutability: 'view', inputs: [{ type: 'address' }], outputs: [{ type: 'uint256' }] }], functionName: 'balanceOf', args: [(await api('GET', `/agents/${trader}`)).body.walletAddress] })
    expect(balance.toString()).toBe(received[0].n)
  })

  it('refuses bad input with a code and names each field', async () => {
    const other = await app.account({ name: 'other' })
    const theirs = (await other.api('POST', '/agents', { name: 'theirs', skills: ['trading'] })).body.id
    const cases: Array<[unknown, number, string[]]> = [
      [{ ...dca(), agent_id: theirs }, 404, []],
      // A kind's problems are named as the client wrote them, every one in one answer.
      [dca({ tokenOut: 'NOPE' }), 422, ['dca.tokenOut']],
      [dca({ tokenOut: 'ETH' }), 422, ['dca.tokenOut']],
      [dca({ tokenIn: 'NOPE', tokenOut: 'NOPE2' }), 422, ['dca.tokenIn', 'dca.tokenOut']],
      [dca({ amountPerRun: '0' }), 422, ['dca.amountPerRun']],
      [dca({ amountPerRun: '-1' }), 422, ['dca.amountPerRun']],
      [{ agent_id: trader, name: 'x', trigger: { type: 'interval', everySeconds: 0 }, action: { type: 'tool_call', tool: 'get_portfolio', args: {} } }, 422, ['trigger.everySeconds']],
      [{ agent_id: trader, name: 'x', trigger: { type: 'interval', everySeconds: 5 }, action: { type: 'tool_call', tool: 'launch_token', args: {} } }, 422, ['action.tool']],
      [{ agent_id: trader, name: 'x', trigger: { type: 'interval', everySeconds: 5 }, action: { type: 'tool_call', tool: 'set_policy', args: {} } }, 422, ['action.tool']],
      [{ agent_id: trader, name: 'x', kind: 'limit', limit: { tokenIn: 'USDC', tokenOut: 'ETH', amountIn: '5', priceUsd: '1000000', operator: 'lte' } }, 422, ['limit.priceUsd']],
      [{ agent_id: trader, name: 'x', trigger: { type: 'interval', everySeconds: 5 }, action: { type: 'tool_call', tool: 'swap_execute', args: { tokenIn: 'ETH', tokenOut: 'NOPE', amountIn: '1' } } }, 422, ['action.args.tokenOut']],
      [{ agent_id: trader, name: 'x', kind: 'dca' }, 422, ['dca']],
      [{ agent_id: trader, name: 'x' }, 422, ['trigger', 'action']],
    ]
    for (const [body, status, fields] of cases) {
      const res = await api('POST', '/automations', body)
      expect(res.status, JSON.stringify([body, res.body])).toBe(status)
      for (const f of fields) expect(Object.keys(res.body.field_errors ?? {}), JSON.stringify(res.body)).toContain(f)
    }
    // Another account sees none of this account's automations.
    const mine = (await api('GET', `/automations?agent_id=${trader}`)).body.automations[0].id
    expect((await other.api('GET', `/automations/${mine}`)).status).toBe(404)
    expect((await other.api('PATCH', `/automations/${mine}`, { status: 'paused' })).status).toBe(404)
    expect((await other.api('DELETE', `/automations/${mine}`)).status).toBe(404)
    expect((await other.api('POST', `/automations/${mine}/trigger`)).status).toBe(404)
    expect((await other.api('GET', '/automations')).body.automations).toEqual([])
    // A PATCH gets the checks of a creation: an unknown token, a threshold already met.
    const patched = await api('PATCH', `/automations/${mine}`, {
      action: { type: 'tool_call', tool: 'swap_execute', args: { tokenIn: 'ETH', tokenOut: 'NOPE', amountIn: '1' } },
      trigger: { type: 'price_threshold', mint: 'ETH', operator: 'gte', priceUsd: '1' },
    })
    expect(patched.status, JSON.stringify(patched.body)).toBe(422)
    expect(Object.keys(patched.body.field_errors).sort()).toEqual(['action.args.tokenOut', 'trigger.priceUsd'])
  })

  it('pause, trigger and cancel answer as documented', async () => {
    const body = {
      agent_id: trader, name: 'to pause', trigger: { type: 'interval', everySeconds: 3600, startAt: new Date(Date.now() + 3_600_000).toISOString() },
      action: { type: 'tool_call', tool: 'swap_execute', args: { tokenIn: 'ETH', tokenOut: 'USDC', amountIn: '0.002' } },
    }
    const b = (await api('POST', '/automations', body)).body
    expect((await api('PATCH', `/automations/${b.id}`, { status: 'paused', name: 'paused one' })).body).toMatchObject({ status: 'paused', name: 'paused one' })
    expect((await api('POST', `/automations/${b.id}/trigger`)).status).toBe(409)
    expect((await api('PATCH', `/automations/${b.id}`, { status: 'armed' })).body.status).toBe('armed')
    const cancelled = await api('DELETE', `/automations/${b.id}`)
    expect(cancelled).toMatchObject({ status: 200, body: { id: b.id, status: 'cancelled' } })
    expect((await api('GET', `/automations?agent_id=${trader}&status=cancelled`)).body.automations.map((x: { id: string }) => x.id)).toEqual([b.id])
  })

  it('a stopped agent suspends its automations; starting it fires the missed tick once', async () => {
    const agent = await fundedAgent('sleepy', { start: false })
    const a = (await api('POST', '/automations', { ...dca({ everySeconds: 1, maxRuns: 100 }), agent_id: agent })).body
    const suspended = await until(a.id, (x) => x.suspended === true)
    expect(suspended).toMatchObject({ status: 'armed', runCount: 0, nextRunAt: null })
    expect(suspended.firings[0]).toMatchObject({ outcome: 'skipped', reason: expect.stringMatching(/^agent_not_running/) })
    const before = await sentTxs(agent)
    expect((await api('POST', `/agents/${agent}/start`)).status).toBe(200)
    const fired = await until(a.id, (x) => x.runCount >= 1)
    expect(fired.firings[0]).toMatchObject({ outcome: 'ok' })
    expect(await sentTxs(agent)).toBeGreaterThanOrEqual(before + 1)
    // Deleting the agent cancels its automations.
    await api('DELETE', `/agents/${agent}`)
    await until(a.id, (x) => x.status === 'cancelled')
  })

  it('a retried firing is the swap it started, even after a PATCH changed its action or the agent stopped', async () => {
    const agent = await fundedAgent('retried')
    const a = (await api('POST', '/automations', { ...dca({ everySeconds: 3600, maxRuns: 100 }), agent_id: agent })).body
    await until(a.id, (x) => x.runCount === 1)
    const [op] = await q(`select id from wallet_op where parent_id = $1`, [a.id])
    // Firing 1's effect attempted again, as after a crash between its swap's start and its outcome.
    const store = createAutomationsStore(app.services.pool)
    const fire = createAutomationEffects({ core: () => app.services.core, tools: createToolPort(() => app.services.core), store })[AUTOMATION_FIRE]!
    const retry = async () => {
      const row = (await store.get(a.id))!
      const effect = { id: 'retry', actorId: a.id, accountId: row.account_id, kind: AUTOMATION_FIRE, params: { number: 1, source: { source: 'timer' } }, status: 'pending', externalRef: null, result: null, attempts: 2 } as EffectRow
      return fire(effect, { context: async () => row.ctx } as unknown as EffectContext)
    }
    const action = (await api('GET', `/automations/${a.id}`)).body.action
    expect((await api('PATCH', `/automations/${a.id}`, { action: { ...action, args: { ...action.args, amountIn: '0.002' } } })).status).toBe(200)
    expect(await retry()).toMatchObject({ type: 'fire.started', childId: op.id })
    expect((await api('POST', `/agents/${agent}/stop`)).status).toBe(200)
    expect(await retry()).toMatchObject({ type: 'fire.started', childId: op.id })
    expect(await q(`select id from wallet_op where parent_id = $1`, [a.id])).toEqual([op])
  })

  it("a listed agent fires nothing; a sale cancels the seller's automations", async () => {
    const agent = await fundedAgent('for-sale')
    const a = (await api('POST', '/automations', { ...dca({ everySeconds: 3600, maxRuns: 100 }), agent_id: agent })).body
    await until(a.id, (x) => x.runCount === 1)
    const listing = await api('POST', '/market', { agentId: agent, priceCredits: 10 })
    expect(listing.status, JSON.stringify(listing.body)).toBe(201)
    // Fired by hand while listed: the agent is paused, so the firing is skipped and moves nothing.
    const before = await sentTxs(agent)
    expect((await api('POST', `/automations/${a.id}/trigger`)).status).toBe(200)
    const skipped = await until(a.id, (x) => x.firings[0].number === 2)
    expect(skipped.firings[0]).toMatchObject({ outcome: 'skipped', reason: expect.stringMatching(/^agent_not_running/) })
    expect(await sentTxs(agent)).toBe(before)

    const buyer = await app.account({ name: 'buyer' })
    expect((await buyer.api('POST', `/market/${listing.body.id}/buy`)).status).toBe(200)
    await until(a.id, (x) => x.status === 'cancelled')
    expect((await buyer.api('GET', `/automations/${a.id}`)).status).toBe(404)
  })

  it('an automation followed as Server-Sent Events: each status as it commits, closed once it completes; 404 for another account', async () => {
    const a = (await api('POST', '/automations', dca({ everySeconds: 1, maxRuns: 2 }))).body
    const url = `${app.url}/api/v1/automations/${a.id}/events`
    const stream = await readSse(url, { apiKey })
    expect(stream.status).toBe(200)
    const statuses = stream.events.map((e) => e.data.status)
    // It ends with the final state; every firing passed through executing.
    expect(statuses.at(-1)).toBe('completed')
    expect(statuses.filter((x) => x === 'executing').length).toBeGreaterThanOrEqual(1)
    expect(stream.events.at(-1)!.data).toMatchObject({ id: a.id, runCount: 2 })
    const other = await app.account({ name: 'sse-other' })
    expect((await readSse(url, { apiKey: other.apiKey })).status).toBe(404)
  })

  it("the operator overview counts the automations' firings per minute and hour", async () => {
    const operator = await app.account({ operator: true, name: 'ops' })
    const [{ n }] = await q(`select count(*)::int as n from effect where kind = 'automation.fire' and created_at > now() - interval '1 hour'`)
    expect(n).toBeGreaterThan(0)
    const overview = (await operator.api('GET', '/ops/overview')).body
    expect(overview.work).toEqual(expect.arrayContaining([{ kind: 'firing', lastMinute: expect.any(Number), lastHour: n }]))
  })
})

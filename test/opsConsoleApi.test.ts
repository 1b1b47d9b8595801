import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, waitForLaunchEnd, type TestApp } from './support/app.ts'
import { startModelServer, type ModelServer } from './support/modelServer.ts'
import { waitFor } from './support/waitFor.ts'
import { foldActorCounts } from '../src/actors/runtime/inspectCounts.store.ts'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { createSiweMessage } from 'viem/siwe'
import { apiClient } from './support/app.ts'

let model: ModelServer
let app: TestApp
let op: Awaited<ReturnType<TestApp['account']>>
let alice: Awaited<ReturnType<TestApp['account']>>
let agent: { id: string; walletAddress: string }
let launch: { id: string; txHash: string; tokenAddress: string }
let swap: { id: string; txHash: string }
const key = () => `k-${Math.random().toString(36).slice(2)}`
const ids = (body: { actors: { id: string }[] }) => body.actors.map((a) => a.id)

beforeAll(async () => {
  model = await startModelServer()
  app = await startTestApp({ OPENAI_BASE_URL: model.baseUrl, OPENAI_API_KEY: 'test-key', SIWE_DOMAIN: 'app.test', AUTOMATION_MAX_FAILURES: '1' }, { withChain: true })
  op = await app.account({ operator: true, name: 'ops' })
  alice = await app.account({ name: 'alice' })
  agent = (await alice.api('POST', '/agents', { name: 'card', skills: ['trading', 'token-launch'] })).body
  expect((await alice.api('POST', '/dev/faucet', { agentId: agent.id, eth: '20', usdc: '20000' })).status).toBe(200)
  const l = await alice.api('POST', '/launch/venue-b', { agentId: agent.id, symbol: 'OPS', name: 'Ops Cat', quote: 'ETH' }, { 'idempotency-key': key() })
  launch = await waitForLaunchEnd(alice.api, l.body.id)
  const x = await alice.api('POST', '/swap/execute', { agentId: agent.id, tokenIn: 'ETH', tokenOut: 'USDC', amountIn: '0.1', slippageBps: 100 })
  expect(x.body.status, JSON.stringify(x.body)).toBe('confirmed')
  swap = x.body
})
afterAll(async () => {
  await app?.close()
  await model?.stop()
})

describe('the operator overview', () => {
  it('counts actors per kind and state, work, effects, dead letters, stuck actors, credits and the chain', async () => {
    const res = await op.api('GET', '/ops/overview')
    expect(res.status).toBe(200)
    expect(res.body.actors).toEqual(expect.arrayContaining([
      { kind: 'agent', status: 'stopped', count: expect.any(Number) },
      { kind: 'launch', status: 'live', count: 1 },
      { kind: 'walletop', status: 'confirmed', count: 1 },
    ]))
    expect(res.body.work).toEqual(expect.arrayContaining([{ kind: 'launch', lastMinute: 1, lastHour: 1 }]))
    expect(res.body.transactions.lastHour).toBeGreaterThanOrEqual(2)
    expect(res.body.effects).toEqual({ pending: expect.any(Number), retrying: expect.any(Number), failed: 0 })
    expect(res.body).toMatchObject({ deadLetters: 0, stuck: 0, modelCreditsLastHour: 0, creditsReserved: 0 })
    expect(res.body.chain.head).toBeGreaterThan(0)
    expect(res.body.chain.lagBlocks).toBeGreaterThanOrEqual(0)
    expect((await alice.api('GET', '/ops/overview')).status).toBe(403)
  })

  it("the counts per kind and state, kept by triggers, equal a count of the actor table, before and after the deltas are folded", async () => {
    const truth = async () =>
      (await app.services.pool.query(`select kind, status, count(*)::int as count from actor group by kind, status order by kind, status`)).rows
    const shown = async () => (await op.api('GET', '/ops/overview')).body.actors
    expect(await shown()).toEqual(await truth())
    expect((await op.api('GET', '/ops/actors/counts')).body.counts).toEqual(await truth())
    expect(Number((await app.services.pool.query('select count(*) from actor_count_delta')).rows[0].count)).toBeGreaterThan(0)
    await foldActorCounts(app.services.pool)
    expect(Number((await app.services.pool.query('select count(*) from actor_count_delta')).rows[0].count)).toBe(0)
    expect(await shown()).toEqual(await truth())
    // A state change after the fold: a -1 and a +1, and the answer still equals the table.
    expect((await alice.api('POST', `/agents/${agent.id}/start`)).status).toBe(200)
    expect(await shown()).toEqual(await truth())
    expect((await alice.api('POST', `/agents/${agent.id}/stop`)).status).toBe(200)
  })
})

describe('actor lists with filters and search', () => {
  it('filters by kind, account, agent, time and "failed only"; searches by id, tx hash and address', async () => {
    expect(ids((await op.api('GET', `/ops/actors?kind=launch&accountId=${alice.accountId}`)).body)).toEqual([launch.id])
    expect(ids((await op.api('GET', `/ops/actors?accountId=${op.accountId}`)).body)).toEqual([])
    expect(ids((await op.api('GET', `/ops/actors?agentId=${agent.id}&limit=100`)).body).sort()).toEqual([agent.id, launch.id, swap.id].sort())
    expect((await op.api('GET', '/ops/actors?status=failed')).body.actors.every((a: { status: string }) => a.status === 'failed')).toBe(true)
    const future = new Date(Date.now() + 3_600_000).toISOString()
    expect(ids((await op.api('GET', `/ops/actors?since=${encodeURIComponent(future)}`)).body)).toEqual([])
    expect(ids((await op.api('GET', `/ops/actors?q=${swap.txHash}`)).body)).toEqual([swap.id])
    expect(ids((await op.api('GET', `/ops/actors?q=${launch.txHash.toUpperCase().replace('0X', '0x')}`)).body)).toEqual([launch.id])
    expect(ids((await op.api('GET', `/ops/actors?q=${agent.walletAddress}`)).body)).toEqual([agent.id])
    expect(ids((await op.api('GET', `/ops/actors?q=${launch.tokenAddress}`)).body)).toEqual([launch.id])
    expect(ids((await op.api('GET', `/ops/actors?q=${launch.id}`)).body)).toEqual([launch.id])
    expect((await op.api('GET', '/ops/actors?since=yesterday')).status).toBe(422)
  })

  it('"failed only" (failed=true) lists each kind\'s failure states: a run out of budget and an automation in error, not a stopped run', async () => {
    // Another account: its run's model calls leave alice's credits alone (her card's flags are tested below).
    const bob = await app.account({ name: 'bob' })
    const bot = (await bob.api('POST', '/agents', { name: 'failing', skills: ['trading'] })).body
    // A run of one step whose model asks for a tool: the step after it is past maxSteps.
    const goal = 'look once too often'
    model.mock.on({ userMessage: goal, hasToolResult: false }, { toolCalls: [{ id: 'call_once', name: 'get_portfolio', arguments: '{}' }] })
    const run = (await bob.api('POST', `/agents/${bot.id}/runs`, { goal, maxSteps: 1 })).body
    await waitFor(async () => (await bob.api('GET', `/runs/${run.id}`)).body.status === 'budget_exhausted', 20_000)
    // An automation whose firing fails (a swap from an unfunded wallet); AUTOMATION_MAX_FAILURES is 1 here.
    expect((await bob.api('POST', `/agents/${bot.id}/start`)).status).toBe(200)
    const auto = await bob.api('POST', '/automations', {
      agent_id: bot.id, name: 'doomed', trigger: { type: 'interval', everySeconds: 3600, startAt: new Date(Date.now() + 3_600_000).toISOString() },
      action: { type: 'tool_call', tool: 'swap_execute', args: { tokenIn: 'ETH', tokenOut: 'USDC', amountIn: '0.01' } },
    })
    expect(auto.status, JSON.stringify(auto.body)).toBe(201)
    expect((await bob.api('POST', `/automations/${auto.body.id}/trigger`)).status).toBe(200)
    await waitFor(async () => (await bob.api('GET', `/automations/${auto.body.id}`)).body.status === 'error', 20_000)
    expect((await bob.api('POST', `/agents/${bot.id}/stop`)).status).toBe(200)
    // A run its owner stopped: not a failure. Started at once: the stop's own effect (it ends the
    // agent's run in progress) ends only a run created before the stop (test/agentStopRuns.test.ts).
    // Late for real (a fixture's `latency` paces a stream's chunks, not this answer): the run is in progress when stopped.
    model.mock.onMessage('wait for the stop', { content: 'stopped anyway' }, { chaos: { latencyMs: 1500 } })
    const stopped = (await bob.api('POST', `/agents/${bot.id}/runs`, { goal: 'wait for the stop', maxSteps: 3 })).body
    await waitFor(async () => (await bob.api('GET', `/runs/${stopped.id}`)).body.status === 'running')
    expect((await bob.api('POST', `/runs/${stopped.id}/stop`)).status).toBe(200)
    await waitFor(async () => ['stopped', 'completed'].includes((await bob.api('GET', `/runs/${stopped.id}`)).body.status))

    const failures: Record<string, string[]> = { launch: ['failed'], walletop: ['failed'], chatturn: ['failed'], run: ['failed', 'budget_exhausted'], automation: ['error'] }
    const failed = (await op.api('GET', `/ops/actors?failed=true&agentId=${bot.id}&limit=100`)).body.actors as { id: string; kind: string; status: string }[]
    expect(failed.map((a) => a.id).sort()).toEqual([run.id, auto.body.id].sort())
    const all = (await op.api('GET', '/ops/actors?failed=true&limit=100')).body.actors as { kind: string; status: string }[]
    expect(all.every((a) => failures[a.kind]?.includes(a.status)), JSON.stringify(all)).toBe(true)
    // With other filters: one kind; `status=failed` alone is still one state name.
    expect(ids((await op.api('GET', `/ops/actors?failed=true&kind=run&accountId=${bob.accountId}&limit=100`)).body)).toContain(run.id)
    expect(ids((await op.api('GET', `/ops/actors?failed=true&kind=automation&agentId=${bot.id}`)).body)).toEqual([auto.body.id])
    expect(ids((await op.api('GET', `/ops/actors?status=failed&agentId=${bot.id}`)).body)).toEqual([])
    expect(ids((await op.api('GET', `/ops/actors?failed=false&kind=run&agentId=${bot.id}`)).body).sort()).toEqual([run.id, stopped.id].sort())
    expect((await op.api('GET', '/ops/actors?failed=yes')).status).toBe(422)
  })
})

describe('one actor', () => {
  it("a wallet operation's timeline: events, effects with attempts and durations, and its transactions", async () => {
    const res = await op.api('GET', `/ops/actors/${swap.id}/timeline`)
    expect(res.status).toBe(200)
    expect(res.body.actor).toMatchObject({ id: swap.id, kind: 'walletop', status: 'confirmed', parentId: null })
    expect(res.body).toMatchObject({ parent: null, children: [], deadLetters: [] })
    const types = res.body.timeline.map((e: { type: string }) => e.type)
    expect(types).toContain('event')
    expect(res.body.timeline.filter((e: { type: string }) => e.type === 'event').map((e: { state: string }) => e.state)).toEqual(['submitting', 'confirming', 'confirmed'])
    expect(res.body.timeline.filter((e: { type: string }) => e.type === 'effect')).toEqual(
      expect.arrayContaining([expect.objectContaining({
        kind: 'op.submit', status: 'done', attempts: 0, attemptsMade: 1, maxAttempts: 8, inFlight: false, lastAttemptAt: expect.any(String),
        endedAt: expect.any(String), durationMs: expect.any(Number), lastError: null, nextAttemptAt: null,
      })]),
    )
    // Waiting for a receipt never gives up: no attempt limit.
    expect(res.body.timeline).toContainEqual(expect.objectContaining({ type: 'effect', kind: 'op.confirm', maxAttempts: null }))
    const at = res.body.timeline.map((e: { at: string }) => e.at)
    expect(at).toEqual([...at].sort())
    // Tracing off (no OTEL_*): no trace was stored, each event and effect says so (test/tracing.test.ts has them on).
    for (const e of res.body.timeline.filter((e: { type: string }) => e.type === 'event' || e.type === 'effect')) expect(e).toHaveProperty('traceId', null)
    const mined = res.body.transactions.at(-1)
    expect(mined).toMatchObject({ hash: swap.txHash, status: 'confirmed', nonce: expect.any(Number), gasUsed: expect.stringMatching(/^\d+$/), blockNumber: expect.any(Number), effectiveGasPrice: expect.stringMatching(/^\d+$/) })
    expect(BigInt(mined.feeWei)).toBe(BigInt(mined.gasUsed) * BigInt(mined.effectiveGasPrice))
    expect((await op.api('GET', '/ops/actors/nope/timeline')).status).toBe(404)
    expect((await alice.api('GET', `/ops/actors/${swap.id}/timeline`)).status).toBe(403)
  })
})

describe('one actor: replacements', () => {
  it('a replaced transaction names the one that replaced it (id and hash)', async () => {
    const { rows } = await app.services.pool.query(`select * from chain_tx where hash = $1`, [swap.txHash])
    const t = rows[0]
    // As the sender stores a fee bump: the stuck one keeps its id, the bump is <id>:r1; here the stored one plays the bump.
    const stuck = `${t.id}:stuck`
    const stuckHash = `0x${'ab'.repeat(32)}`
    await app.services.pool.query(
      `insert into chain_tx (id, request_id, account_id, agent_id, effect_id, kind, chain_id, from_address, to_address, nonce, raw, hash,
                             max_fee_per_gas, max_priority_fee_per_gas, status, replaced_by)
       select $2, request_id, account_id, agent_id, effect_id, kind, chain_id, from_address, to_address, nonce, raw, $3,
              max_fee_per_gas / 2, max_priority_fee_per_gas, 'replaced', id from chain_tx where id = $1`,
      [t.id, stuck, stuckHash],
    )
    const txs = (await op.api('GET', `/ops/actors/${swap.id}/timeline`)).body.transactions
    expect(txs.find((x: { id: string }) => x.id === stuck)).toMatchObject({ status: 'replaced', replacedBy: t.id, replacedByHash: swap.txHash, feeWei: null })
    await app.services.pool.query('delete from chain_tx where id = $1', [stuck])
  })
})

describe('one agent', () => {
  it("its card: status, portfolio in USD, today's spend against the caps, flags, runs, turns, the automations slot, audit", async () => {
    const res = await op.api('GET', `/ops/agents/${agent.id}`)
    expect(res.status).toBe(200)
    expect(res.body.agent).toMatchObject({ id: agent.id, status: 'stopped', policy: { paused: false } })
    expect(res.body).toMatchObject({ accountId: alice.accountId, runs: [], chatTurns: [], automations: [], flags: { lowBalance: false, lowCredits: false } })
    expect(Number(res.body.spentTodayUsd)).toBeGreaterThan(0)
    expect(Number(res.body.portfolio.totalValueUsd)).toBeGreaterThan(10)
    expect(res.body.credits).toEqual({ credits: expect.any(Number), reserved: 0 })
    expect((await op.api('GET', '/ops/agents/00000000-0000-4000-8000-000000000000')).status).toBe(404)
  })

  it('its card lists its automations with the next firing (the automation\'s timer)', async () => {
    const bot = (await alice.api('POST', '/agents', { name: 'scheduled', skills: ['trading'] })).body
    const startAt = new Date(Math.ceil((Date.now() + 3_600_000) / 1000) * 1000).toISOString()
    const created = await alice.api('POST', '/automations', {
      agent_id: bot.id, name: 'hourly look', trigger: { type: 'interval', everySeconds: 3600, startAt },
      action: { type: 'tool_call', tool: 'get_portfolio', args: {} },
    })
    expect(created.status, JSON.stringify(created.body)).toBe(201)
    const card = (await op.api('GET', `/ops/agents/${bot.id}`)).body
    expect(card.automations).toEqual([expect.objectContaining({ id: created.body.id, kind: 'automation', status: 'armed', accountId: alice.accountId, nextTimerAt: expect.any(String) })])
    // The timer is set from the delay to startAt when the creation commits: due within a second of it.
    expect(created.body.nextRunAt).toBe(startAt)
    expect(Math.abs(Date.parse(card.automations[0].nextTimerAt) - Date.parse(startAt))).toBeLessThan(1000)
    // Cancelled: still listed, no next firing.
    expect((await alice.api('DELETE', `/automations/${created.body.id}`)).status).toBe(200)
    expect((await op.api('GET', `/ops/agents/${bot.id}`)).body.automations).toEqual([expect.objectContaining({ id: created.body.id, status: 'cancelled', nextTimerAt: null })])
  })

  it('its operations: swaps, transfers and launches newest first in pages, with status, amounts, tx hash and what started each', async () => {
    const bot = (await alice.api('POST', '/agents', { name: 'busy', skills: ['trading', 'token-launch'] })).body
    expect((await alice.api('POST', '/dev/faucet', { agentId: bot.id, eth: '5', usdc: '1000' })).status).toBe(200)
    const launched = await waitForLaunchEnd(alice.api, (await alice.api('POST', '/launch/venue-b', { agentId: bot.id, symbol: 'BUSY', name: 'Busy Cat', quote: 'ETH' }, { 'idempotency-key': key() })).body.id)
    const direct = (await alice.api('POST', '/swap/execute', { agentId: bot.id, tokenIn: 'ETH', tokenOut: 'USDC', amountIn: '0.01', slippageBps: 100 })).body
    expect((await alice.api('POST', `/agents/${bot.id}/whitelist`, { address: agent.walletAddress })).status).toBeLessThan(300)
    const sent = await alice.api('POST', '/wallet/transfer', { agentId: bot.id, to: agent.walletAddress, token: 'USDC', amount: '1' })
    expect(sent.body.status, JSON.stringify(sent.body)).toBe('confirmed')
    // A swap an automation started (it fires for a running agent): its firing's wallet operation names the automation.
    expect((await alice.api('POST', `/agents/${bot.id}/start`)).status).toBe(200)
    const auto = await alice.api('POST', '/automations', {
      agent_id: bot.id, name: 'one swap', trigger: { type: 'interval', everySeconds: 3600, startAt: new Date(Date.now() + 3_600_000).toISOString() },
      action: { type: 'tool_call', tool: 'swap_execute', args: { tokenIn: 'ETH', tokenOut: 'USDC', amountIn: '0.002' } },
    })
    expect(auto.status, JSON.stringify(auto.body)).toBe(201)
    expect((await alice.api('POST', `/automations/${auto.body.id}/trigger`)).status).toBe(200)
    let all: any[] = []
    await waitFor(async () => {
      all = (await op.api('GET', `/ops/agents/${bot.id}/operations?limit=100`)).body.operations
      return all.length === 4 && all.every((o) => ['confirmed', 'live'].includes(o.status))
    }, 30_000).catch(async () => expect({ all, automation: (await alice.api('GET', `/automations/${auto.body.id}`)).body }).toEqual('four ended operations'))
    const byAuto = all.find((o) => o.startedBy)
    expect(byAuto).toMatchObject({
      kind: 'swap', actorKind: 'walletop', status: 'confirmed', txHash: expect.stringMatching(/^0x[0-9a-f]{64}$/), startedBy: { id: auto.body.id, kind: 'automation' },
      amounts: { in: { amount: '0.002', symbol: 'ETH' }, out: { amount: expect.stringMatching(/^\d+(\.\d+)?$/), symbol: 'USDC' } },
    })
    expect(Number(byAuto.usdValue)).toBeGreaterThan(0)
    expect(all.slice(1)).toEqual([
      expect.objectContaining({ id: sent.body.id, kind: 'transfer', status: 'confirmed', txHash: sent.body.txHash, params: expect.objectContaining({ to: agent.walletAddress.toLowerCase(), amount: '1000000' }), startedBy: null }),
      expect.objectContaining({ id: direct.id, kind: 'swap', status: 'confirmed', txHash: direct.txHash, amounts: { in: expect.objectContaining({ amount: '0.01', symbol: 'ETH' }), out: expect.objectContaining({ amount: direct.amountOut, symbol: 'USDC' }) }, startedBy: null }),
      expect.objectContaining({ id: launched.id, kind: 'launch', actorKind: 'launch', status: 'live', txHash: launched.txHash, params: expect.objectContaining({ symbol: 'BUSY', quote: 'ETH' }), result: expect.objectContaining({ tokenAddress: launched.tokenAddress }), startedBy: null }),
    ])
    // Newest first, in pages of two: the pages join up to the whole list.
    const first = (await op.api('GET', `/ops/agents/${bot.id}/operations?limit=2`)).body
    expect(first.operations.map((o: { id: string }) => o.id)).toEqual(all.slice(0, 2).map((o) => o.id))
    const second = (await op.api('GET', `/ops/agents/${bot.id}/operations?limit=2&cursor=${first.nextCursor}`)).body
    expect(second.operations.map((o: { id: string }) => o.id)).toEqual(all.slice(2).map((o) => o.id))
    expect(second.nextCursor).toBeNull()
    expect((await op.api('GET', `/ops/agents/${bot.id}/operations?cursor=forged`)).status).toBe(422)
    expect((await op.api('GET', '/ops/agents/00000000-0000-4000-8000-000000000000/operations')).status).toBe(404)
    expect((await alice.api('GET', `/ops/agents/${bot.id}/operations`)).status).toBe(403)

    // The agent's timeline links to everything that names it: the operations, the launch, the automation.
    const t = (await op.api('GET', `/ops/actors/${bot.id}/timeline`)).body
    expect(t.namingAgent.map((a: { id: string }) => a.id).sort()).toEqual([...all.map((o) => o.id), auto.body.id].sort())
    expect(t.namingAgent.find((a: { id: string }) => a.id === byAuto.id)).toMatchObject({ kind: 'walletop', parentId: auto.body.id })
    expect((await op.api('GET', `/ops/actors/${direct.id}/timeline`)).body.namingAgent).toEqual([])
  })

  it('its value over time: the wallet valued on chain at blocks from before its first transaction to now', async () => {
    const res = await op.api('GET', `/ops/agents/${agent.id}/value-history`)
    expect(res.status).toBe(200)
    const points = res.body.points as { blockNumber: string; at: string; totalValueUsd: string }[]
    expect(points.length).toBeGreaterThanOrEqual(2)
    const blocks = points.map((p) => BigInt(p.blockNumber))
    expect(blocks).toEqual([...blocks].sort((a, b) => (a < b ? -1 : 1)))
    const { rows } = await app.services.pool.query('select min(block_number)::int as b from chain_tx where agent_id = $1', [agent.id])
    expect(Number(points[0]!.blockNumber)).toBe(rows[0].b - 1)
    for (const p of points) expect(Number(p.totalValueUsd)).toBeGreaterThan(10_000)
    expect(Date.parse(points.at(-1)!.at)).toBeGreaterThanOrEqual(Date.parse(points[0]!.at))
    expect((await alice.api('GET', `/ops/agents/${agent.id}/value-history`)).status).toBe(403)
  })
})

describe('console actions on agents and runs', () => {
  it('pausing an agent sets its kill switch: audited with the operator and the reason, and a swap is then refused', async () => {
    expect((await op.api('POST', `/ops/agents/${agent.id}/pause`, {})).status).toBe(422)
    const res = await op.api('POST', `/ops/agents/${agent.id}/pause`, { reason: 'runaway trading reported' })
    expect(res.status).toBe(200)
    expect(res.body.policy.paused).toBe(true)
    const trail = (await op.api('GET', `/ops/audit?subjectId=${agent.id}`)).body.entries
    expect(trail[0]).toMatchObject({ action: 'ops.agent.pause', accountId: alice.accountId, actor: { type: 'operator', accountId: op.accountId }, before: { paused: false }, after: { paused: true, reason: 'runaway trading reported' } })
    expect(trail.map((e: { action: string }) => e.action)).toContain('policy.change')
    // The owner sees it in the agent's own trail.
    expect((await alice.api('GET', `/agents/${agent.id}/audit`)).body.entries.map((e: { action: string }) => e.action)).toContain('ops.agent.pause')
    const refused = await alice.api('POST', '/swap/execute', { agentId: agent.id, tokenIn: 'ETH', tokenOut: 'USDC', amountIn: '0.1', slippageBps: 100 })
    expect(refused.status).toBe(403)
    expect(refused.body.code).toBe('policy_violation')
  })

  it('cancelling a run stops it through the stop use case, audited', async () => {
    const runner = (await alice.api('POST', '/agents', { name: 'runner', skills: ['trading'] })).body
    // The model answers after 6 s: the run is still running when the operator cancels it, even
    // when a loaded machine makes each request slow (a fixture's `latency` paces a stream's chunks
    // and did not delay this answer: the run could end before the test saw it running).
    model.mock.onMessage('think slowly', { content: 'done thinking' }, { chaos: { latencyMs: 6000 } })
    const started = await alice.api('POST', `/agents/${runner.id}/runs`, { goal: 'think slowly', maxSteps: 3 })
    expect(started.status).toBe(202)
    await waitFor(async () => (await alice.api('GET', `/runs/${started.body.id}`)).body.status === 'running', 15_000)
    const res = await op.api('POST', `/ops/runs/${started.body.id}/cancel`, { reason: 'stuck on a bad goal' })
    expect(res.status).toBe(200)
    expect(['stopped', 'completed']).toContain(res.body.status)
    const trail = (await op.api('GET', `/ops/audit?subjectId=${started.body.id}`)).body.entries
    expect(trail).toEqual([expect.objectContaining({ action: 'ops.run.cancel', before: { status: expect.any(String) }, after: { status: res.body.status, reason: 'stuck on a bad goal' } })])
    expect((await op.api('POST', `/ops/runs/${agent.id}/cancel`, { reason: 'not a run' })).status).toBe(404)
    const card = (await op.api('GET', `/ops/agents/${runner.id}`)).body
    expect(card.runs).toEqual([expect.objectContaining({ id: started.body.id, kind: 'run', status: res.body.status, nextTimerAt: null })])
  })
})

describe('the console page', () => {
  it('is served at /ops with its assets from the package: same-origin only, no CDN', async () => {
    const page = await fetch(`${app.url}/ops`)
    expect(page.status).toBe(200)
    expect(page.headers.get('content-type')).toMatch(/^text\/html/)
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'")
    expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'")
    const html = await page.text()
    expect(html).toContain('/ops/console.js')
    for (const asset of ['/ops/console.js', '/ops/console.css']) {
      const res = await fetch(`${app.url}${asset}`)
      expect(res.status, asset).toBe(200)
      // The SVG namespace is a name, not a fetch.
      expect((await res.text()).replaceAll('http://www.w3.org/2000/svg', ''), asset).not.toMatch(/https?:\/\//)
    }
    expect(html).not.toMatch(/https?:\/\//)
    // Its icon, linked from the page and at the origin's /favicon.ico.
    expect(html).toContain('<link rel="icon" href="/ops/icon.svg"')
    for (const icon of ['/ops/icon.svg', '/favicon.ico']) {
      const res = await fetch(`${app.url}${icon}`)
      expect([res.status, res.headers.get('content-type')], icon).toEqual([200, 'image/svg+xml'])
      expect(await res.text(), icon).toMatch(/^<svg /)
    }
  })
})

describe('signed in with a SIWE session', () => {
  it("an operator account's session reads the console's API, and its actions need the CSRF token; another account's session is refused", async () => {
    const pub = apiClient(`${app.url}/api/v1`)
    const session = async () => {
      const signer = privateKeyToAccount(generatePrivateKey())
      const { nonce } = (await pub('GET', '/auth/nonce')).body
      const message = createSiweMessage({ address: signer.address, chainId: 31337, domain: 'app.test', nonce, uri: 'https://app.test', version: '1' })
      const res = await pub('POST', '/auth/siwe', { message, signature: await signer.signMessage({ message }) })
      expect(res.status).toBe(200)
      return { accountId: res.body.account.id as string, cookie: (res.headers.get('set-cookie') ?? '').split(';')[0]!, csrf: res.body.csrfToken as string }
    }
    // Asked with no session: /auth/session/state answers 200 signedIn false; /auth/session keeps its 401 for API clients.
    expect([(await pub('GET', '/auth/session/state')).status, (await pub('GET', '/auth/session/state')).body.signedIn]).toEqual([200, false])
    expect((await pub('GET', '/auth/session/state', undefined, { cookie: 'sid=not-a-session' })).body.signedIn).toBe(false)
    expect((await pub('GET', '/auth/session')).status).toBe(401)
    const plain = await session()
    expect((await pub('GET', '/ops/overview', undefined, { cookie: plain.cookie })).status).toBe(403)
    expect((await pub('GET', '/auth/session/state', undefined, { cookie: plain.cookie })).body).toMatchObject({ signedIn: true, accountId: plain.accountId, isOperator: false, csrfToken: plain.csrf })

    const operator = await session()
    await app.services.pool.query('update account set is_operator = true where id = $1', [operator.accountId])
    expect((await pub('GET', '/ops/overview', undefined, { cookie: operator.cookie })).status).toBe(200)
    const runner = (await alice.api('POST', '/agents', { name: 'siwe-target', skills: ['trading'] })).body
    const noCsrf = await pub('POST', `/ops/agents/${runner.id}/pause`, { reason: 'session without token' }, { cookie: operator.cookie })
    expect(noCsrf.body.code).toBe('csrf_token_invalid')
    // The page never saw the sign-in answer: it reads the session's CSRF token with the cookie alone.
    const current = await pub('GET', '/auth/session', undefined, { cookie: operator.cookie })
    expect(current.body).toMatchObject({ accountId: operator.accountId, isOperator: true, csrfToken: operator.csrf })
    const paused = await pub('POST', `/ops/agents/${runner.id}/pause`, { reason: 'from the dashboard' }, { cookie: operator.cookie, 'x-csrf-token': current.body.csrfToken })
    expect(paused.status).toBe(200)
    const trail = (await op.api('GET', `/ops/audit?subjectId=${runner.id}`)).body.entries
    expect(trail[0]).toMatchObject({ action: 'ops.agent.pause', actor: { type: 'operator', accountId: operator.accountId, via: 'session', address: expect.stringMatching(/^0x/) } })
  })
})

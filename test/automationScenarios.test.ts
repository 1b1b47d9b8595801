import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { erc20Abi, parseEventLogs, type Address, type Hash } from 'viem'
import type { Api, ApiResponse } from './support/app.ts'
import { startModelServer, type ModelServer } from './support/modelServer.ts'
import { startServerApp, type ServerApp } from './support/serverApp.ts'
import { waitFor } from './support/waitFor.ts'
import { createdWithParentsRecord } from './support/childCommit.ts'
import { answerAt as scriptedAnswerAt, chatTurnEnds, lastToolResults as lastToolResultsOf, swapCall } from './support/scriptedChat.ts'
import { automationUntil } from './support/automations.ts'

/**
 * The automations issue's scenarios on the real service run as a child process (`node src/main.ts`),
 * with its embedded anvil, its own database and the scripted model server as its model provider:
 * everything is reached from outside, as a client does (HTTP), plus the database and the chain the
 * service writes, read to check what it says.
 *  1. A DCA every 2 s for 5 firings: 5 swaps, `completed`, the wallet's balances what the receipts say.
 *  2. A limit order fires once within two blocks of another wallet's swap pushing the price across;
 *     a sniper buys a matching venue-a launch within two blocks and ignores one that does not match.
 *  3. `max_spend_usd` holds with 10 firings asked for at once (and an agent's daily cap with 10
 *     automations due at the same moment).
 *  4. A chat turn whose swap confirms after the HTTP wait: the model is then told the tx hash; a
 *     model reusing the tool-call id `call_0` in two rounds gets two swaps.
 * The in-process tests of the same behaviour (with the edge cases): automations.test.ts,
 * automationTriggers.test.ts, toolCallChildren.test.ts (the daily-cap race, 3b, is shown here only).
 */
let model: ModelServer
let app: ServerApp
let api: Api

const q = (sql: string, values: unknown[] = []) => app.q(sql, values)
const sentTxs = async (agentId: string) => (await q(`select count(*)::int as n from chain_tx where agent_id = $1`, [agentId]))[0].n as number
const receipt = (hash: string) => app.publicClient.getTransactionReceipt({ hash: hash as Hash })
const blockOf = async (hash: string) => Number((await receipt(hash)).blockNumber)

const until = (id: string, done: (a: any) => boolean, timeoutMs?: number) => automationUntil(api, id, done, timeoutMs)

/** An agent with ETH from the faucet, started. */
async function agent(name: string, skills: string[], eth = '5'): Promise<string> {
  const created = await api('POST', '/agents', { name, skills })
  expect(created.status, JSON.stringify(created.body)).toBe(201)
  expect((await api('POST', '/dev/faucet', { agentId: created.body.id, eth })).status).toBe(200)
  expect((await api('POST', `/agents/${created.body.id}/start`)).status).toBe(200)
  return created.body.id
}

async function launch(launcher: string, symbol: string) {
  const res = await api('POST', '/launch/venue-a', { agentId: launcher, symbol, name: symbol, quote: 'ETH' }, { 'idempotency-key': `launch-${symbol}` })
  expect([200, 201, 202], JSON.stringify(res.body)).toContain(res.status)
  let l: any
  await waitFor(async () => (l = (await api('GET', `/launch/${res.body.id}`)).body).status === 'live', 30_000)
  return l as { tokenAddress: string; txHash: string }
}

/** Waits until the service's indexer has passed `block` (its checkpoint in the database). */
async function indexedPast(block: number) {
  await waitFor(async () => Number((await q(`select block_number from chain_checkpoint`))[0]?.block_number ?? -1) >= block, 20_000)
}

beforeAll(async () => {
  model = await startModelServer()
  app = await startServerApp(
    {
      AUTOMATION_MIN_INTERVAL_SECONDS: '1',
      OPENAI_BASE_URL: model.baseUrl,
      OPENAI_API_KEY: 'test-key',
      // A chat turn's HTTP wait, short enough for a swap held in the mempool to outlast it.
      CHAT_WAIT_SECONDS: '2',
      // The tests poll tightly (ten automations at once): the default limits would answer 429.
      RATE_LIMIT_PER_KEY: '1000000',
      RATE_LIMIT_PER_IP: '1000000',
    },
    { name: 'alts-scenarios' },
  )
  api = app.api
}, 180_000)
afterAll(async () => {
  await app?.rpc('evm_setAutomine', [true]).catch(() => {})
  await app?.close()
  await model?.stop()
})
// A failure shows what the service logged last.
beforeEach(({ onTestFailed }) => onTestFailed(() => console.error(`server log (tail):\n${app.server.logs().slice(-8000)}`)))

describe('automation scenarios on the service as a child process', () => {
  it('1. a DCA every 2 s for 5 firings: 5 swaps on chain, completed, the balances what the receipts say', async () => {
    const trader = await agent('dca-bot', ['trading'])
    const wallet = (await api('GET', `/agents/${trader}`)).body.walletAddress as Address
    const usdc = app.manifest.contracts.usdc
    const ethBefore = await app.publicClient.getBalance({ address: wallet })
    const usdcOf = () => app.publicClient.readContract({ address: usdc, abi: erc20Abi, functionName: 'balanceOf', args: [wallet] })
    const usdcBefore = await usdcOf()
    const before = await sentTxs(trader)
    const body = { agent_id: trader, name: 'eth to usdc', kind: 'dca', dca: { tokenIn: 'ETH', tokenOut: 'USDC', amountPerRun: '0.001', everySeconds: 2, maxRuns: 5 } }
    const created = await api('POST', '/automations', body, { 'idempotency-key': 'dca-1' })
    expect(created.status, JSON.stringify(created.body)).toBe(201)
    expect(created.body).toMatchObject({ agentId: trader, kind: 'dca', status: expect.stringMatching(/armed|executing/), triggerType: 'interval', actionType: 'tool_call', runCount: expect.any(Number) })
    // A blind retry of the creation creates nothing new.
    expect((await api('POST', '/automations', body, { 'idempotency-key': 'dca-1' })).body.id).toBe(created.body.id)
    expect((await api('GET', `/automations?agent_id=${trader}`)).body.automations).toHaveLength(1)

    const done = await until(created.body.id, (a) => a.status === 'completed', 40_000)
    expect(done).toMatchObject({ runCount: 5, completedReason: 'max_firings_reached', lastError: null, nextRunAt: null })
    expect(done.firings.map((f: { number: number; outcome: string }) => [f.number, f.outcome])).toEqual([[5, 'ok'], [4, 'ok'], [3, 'ok'], [2, 'ok'], [1, 'ok']])
    expect(done.firings.filter((f: { catchUp: boolean }) => f.catchUp)).toEqual([])
    expect(await sentTxs(trader)).toBe(before + 5)
    // Each firing's swap is the automation's child, confirmed, and its tx hash is the firing's.
    const ops = await q(`select x.status, x.snapshot->'context'->>'txHash' as hash from wallet_op w join actor x on x.id = w.id where w.parent_id = $1 order by w.created_at`, [created.body.id])
    expect(ops.map((o) => o.status)).toEqual(['confirmed', 'confirmed', 'confirmed', 'confirmed', 'confirmed'])
    const hashes = done.firings.map((f: { txHash: string }) => f.txHash) as string[]
    expect(new Set(hashes)).toEqual(new Set(ops.map((o) => o.hash)))
    // On the grid (ticks every 2 s from the creation): the k-th swap started no earlier than its tick.
    const grid = Date.parse(created.body.createdAt)
    const starts = (await q(`select extract(epoch from w.created_at) * 1000 as ms from wallet_op w where w.parent_id = $1 order by w.created_at`, [created.body.id])).map((r) => Number(r.ms))
    for (let k = 1; k < starts.length; k++) expect(starts[k]! - grid).toBeGreaterThanOrEqual(k * 2000 - 50)

    // The wallet's balances, read on chain, are what the five receipts say: the USDC the swaps'
    // Transfer logs sent it (and the service recorded), the ETH their values and gas took.
    let usdcIn = 0n
    let ethOut = 0n
    for (const hash of hashes) {
      const [r, tx] = await Promise.all([receipt(hash), app.publicClient.getTransaction({ hash: hash as Hash })])
      expect(r.status).toBe('success')
      expect(r.from.toLowerCase()).toBe(wallet.toLowerCase())
      for (const log of parseEventLogs({ abi: erc20Abi, logs: r.logs, eventName: 'Transfer' })) {
        if (log.address.toLowerCase() === usdc.toLowerCase() && log.args.to.toLowerCase() === wallet.toLowerCase()) usdcIn += log.args.value
      }
      ethOut += tx.value + r.gasUsed * r.effectiveGasPrice
    }
    expect(usdcIn).toBeGreaterThan(0n)
    expect(await usdcOf()).toBe(usdcBefore + usdcIn)
    expect(await app.publicClient.getBalance({ address: wallet })).toBe(ethBefore - ethOut)
    const [{ n: recorded }] = await q(`select coalesce(sum((x.snapshot->'context'->'result'->>'amountOutBaseUnits')::numeric), 0)::text as n from wallet_op w join actor x on x.id = w.id where w.parent_id = $1`, [created.body.id])
    expect(recorded).toBe(usdcIn.toString())
  })

  it('2a. a limit order fires once, within two blocks of the swap from another wallet that pushed the price across', async () => {
    const launcher = await agent('launcher', ['token-launch'])
    const whale = await agent('whale', ['trading'], '20')
    const token = (await launch(launcher, 'LIMITCAT')).tokenAddress
    const buyer = await agent('limit-buyer', ['trading'])
    const [price] = (await api('GET', `/price?tokens=${token}`)).body.prices
    const threshold = (Number(price.priceUsd) * 1.05).toPrecision(6)
    const created = await api('POST', '/automations', {
      agent_id: buyer, name: 'breakout', kind: 'limit',
      limit: { tokenIn: 'ETH', tokenOut: token, mint: token, amountIn: '0.01', operator: 'gte', priceUsd: threshold, slippageBps: 500, acknowledgeUnverified: true },
    })
    expect(created.status, JSON.stringify(created.body)).toBe(201)
    expect(created.body).toMatchObject({ kind: 'limit', status: 'armed', triggerType: 'price_threshold', triggerOnce: true, trigger: { mint: token, operator: 'gte' } })

    // Another wallet's buy pushes the price over the threshold.
    const push = await api('POST', '/swap/execute', { agentId: whale, tokenIn: 'ETH', tokenOut: token, amountIn: '0.2', slippageBps: 5000, acknowledgeUnverified: true })
    expect(push.body.status, JSON.stringify(push.body)).toBe('confirmed')
    expect(Number((await api('GET', `/price?tokens=${token}`)).body.prices[0].priceUsd)).toBeGreaterThanOrEqual(Number(threshold))

    const done = await until(created.body.id, (a) => a.status === 'completed')
    expect(done).toMatchObject({ runCount: 1, completedReason: 'fired_once' })
    expect(done.firings).toMatchObject([{ number: 1, source: 'price', outcome: 'ok', txHash: expect.any(String) }])
    expect((await receipt(done.firings[0].txHash)).status).toBe('success')
    expect(await blockOf(done.firings[0].txHash)).toBeLessThanOrEqual((await blockOf(push.body.txHash)) + 2)
    // Later blocks above the threshold, once indexed, fire nothing more.
    const again = await api('POST', '/swap/execute', { agentId: whale, tokenIn: 'ETH', tokenOut: token, amountIn: '0.1', slippageBps: 5000, acknowledgeUnverified: true })
    expect(again.body.status, JSON.stringify(again.body)).toBe('confirmed')
    await indexedPast(await blockOf(again.body.txHash))
    expect((await q(`select count(*)::int as n from wallet_op where parent_id = $1`, [created.body.id]))[0].n).toBe(1)
    expect(await sentTxs(buyer)).toBe(1)
  })

  it('2b. a sniper buys a matching venue-a launch within two blocks and ignores one that does not match', async () => {
    const launcher = await agent('sniper-launcher', ['token-launch'])
    const sniper = await agent('sniper', ['trading'])
    const created = await api('POST', '/automations', {
      agent_id: sniper, name: 'moon sniper', kind: 'sniper',
      sniper: { quote: 'ETH', amountIn: '0.01', maxBuys: 1, venue: 'venue-a', symbolPattern: 'MOON*', slippageBps: 2000 },
    })
    expect(created.status, JSON.stringify(created.body)).toBe(201)
    expect(created.body).toMatchObject({ kind: 'sniper', status: 'armed', triggerType: 'new_launch', maxFirings: 1 })

    const ignored = await launch(launcher, 'NOTIT')
    const moon = await launch(launcher, 'MOONCAT')
    const done = await until(created.body.id, (a) => a.status === 'completed')
    expect(done).toMatchObject({ runCount: 1, completedReason: 'max_firings_reached' })
    expect(done.firings).toMatchObject([{ number: 1, source: 'launch', outcome: 'ok' }])
    expect((await receipt(done.firings[0].txHash)).status).toBe('success')
    expect(await blockOf(done.firings[0].txHash)).toBeLessThanOrEqual((await blockOf(moon.txHash)) + 2)
    const bought = await q(`select x.snapshot->'context'->'params'->>'tokenOut' as token from wallet_op w join actor x on x.id = w.id where w.parent_id = $1`, [created.body.id])
    expect(bought.map((b) => b.token)).toEqual([moon.tokenAddress.toLowerCase()])
    expect(bought.map((b) => b.token)).not.toContain(ignored.tokenAddress.toLowerCase())
    expect(await sentTxs(sniper)).toBe(1)
  })

  it('3a. max_spend_usd holds with 10 firings asked for at once; a completed automation answers 409', async () => {
    const trader = await agent('budgeted', ['trading'])
    // A read-only quote prices the swap; the budget fits two of these swaps, not three.
    const quote = (await api('POST', '/swap/quote', { agentId: trader, tokenIn: 'ETH', tokenOut: 'USDC', amountIn: '0.002' })).body
    const budget = (Number(quote.valueInUsd) * 2.5).toFixed(2)
    const created = await api('POST', '/automations', {
      agent_id: trader, name: 'budgeted', trigger: { type: 'interval', everySeconds: 3600, startAt: new Date(Date.now() + 3_600_000).toISOString() },
      action: { type: 'tool_call', tool: 'swap_execute', args: { tokenIn: 'ETH', tokenOut: 'USDC', amountIn: '0.002' } }, max_spend_usd: budget,
    })
    expect(created.status, JSON.stringify(created.body)).toBe(201)
    const a = created.body
    expect(a.status).toBe('armed')
    const before = await sentTxs(trader)
    const answers = await Promise.all(Array.from({ length: 10 }, () => api('POST', `/automations/${a.id}/trigger`)))
    // Each trigger fires once now or waits behind the firing in flight; a full queue refuses.
    expect(answers.every((r) => r.status === 200 || r.status === 409), JSON.stringify(answers.map((r) => [r.status, r.body]))).toBe(true)
    const done = await until(a.id, (x) => x.status === 'completed', 40_000)
    expect(done.completedReason).toBe('max_spend_reached')
    expect(await sentTxs(trader)).toBe(before + 2)
    const [{ spent }] = await q(`select coalesce(sum(w.usd_value), 0)::float8 as spent from wallet_op w join actor x on x.id = w.id where w.parent_id = $1 and x.status <> 'failed'`, [a.id])
    expect(spent).toBeLessThanOrEqual(Number(budget))
    expect(done.firings.find((f: { outcome: string }) => f.outcome === 'failed').reason).toMatch(/^automation_budget_exhausted/)
    // Two swaps on chain, both mined.
    const ok = done.firings.filter((f: { outcome: string }) => f.outcome === 'ok')
    expect(ok).toHaveLength(2)
    for (const f of ok) expect((await receipt(f.txHash)).status).toBe('success')
    // A completed automation takes no trigger and no pause: 409.
    expect(await api('POST', `/automations/${a.id}/trigger`)).toMatchObject({ status: 409, body: { code: 'invalid_state' } })
    expect(await api('PATCH', `/automations/${a.id}`, { status: 'paused' })).toMatchObject({ status: 409, body: { code: 'invalid_state' } })
  })

  it("3b. an agent's daily cap holds against 10 automations due at the same moment", async () => {
    const probe = (await api('POST', '/agents', { name: 'probe', skills: ['trading'] })).body.id
    const quote = (await api('POST', '/swap/quote', { agentId: probe, tokenIn: 'ETH', tokenOut: 'USDC', amountIn: '0.002' })).body
    // The cap fits two of these swaps, not three.
    const cap = (Number(quote.valueInUsd) * 2.5).toFixed(2)
    const capped = (await api('POST', '/agents', { name: 'capped', skills: ['trading'], policy: { max_daily_usd: cap } })).body
    expect(capped.policy?.max_daily_usd ?? capped.policy?.maxDailyUsd).toBeDefined()
    expect((await api('POST', '/dev/faucet', { agentId: capped.id, eth: '2' })).status).toBe(200)
    expect((await api('POST', `/agents/${capped.id}/start`)).status).toBe(200)

    const at = new Date(Date.now() + 4_000).toISOString()
    const ids = await Promise.all(
      Array.from({ length: 10 }, async (_, i) => {
        const created = await api('POST', '/automations', {
          agent_id: capped.id, name: `racer ${i}`, max_firings: 1,
          trigger: { type: 'interval', everySeconds: 3600, startAt: at },
          action: { type: 'tool_call', tool: 'swap_execute', args: { tokenIn: 'ETH', tokenOut: 'USDC', amountIn: '0.002' } },
        })
        expect(created.status, JSON.stringify(created.body)).toBe(201)
        return created.body.id as string
      }),
    )
    expect(Date.now(), 'the ten automations were created before they were due').toBeLessThan(Date.parse(at))
    let all: any[] = []
    await waitFor(async () => {
      all = await Promise.all(
        ids.map(async (id) => {
          const res = await api('GET', `/automations/${id}`)
          if (res.status !== 200) throw new Error(`GET /automations/${id} answered ${res.status}: ${JSON.stringify(res.body)}`)
          return res.body
        }),
      )
      return all.every((a) => a.firings.some((f: { outcome: string }) => f.outcome !== 'skipped'))
    }, 60_000)
    const outcomes = all.map((a) => a.firings.find((f: { outcome: string }) => f.outcome !== 'skipped'))
    expect(all.every((a) => a.firings.length === 1)).toBe(true)
    const ends = outcomes.map((f) => Date.parse(f.at))
    expect(Math.max(...ends) - Math.min(...ends)).toBeLessThan(10_000)
    expect(outcomes.filter((f) => f.outcome === 'ok')).toHaveLength(2)
    for (const f of outcomes.filter((o) => o.outcome !== 'ok')) expect(f.reason, JSON.stringify(f)).toMatch(/^policy_violation: .* in the last 24/)
    expect(await sentTxs(capped.id)).toBe(2)
    const [{ spent }] = await q(`select coalesce(sum(w.usd_value), 0)::float8 as spent from wallet_op w join actor x on x.id = w.id where w.agent_id = $1 and x.status = 'confirmed'`, [capped.id])
    expect(spent).toBeLessThanOrEqual(Number(cap))
  })

  describe('4. chat turns that swap', () => {
    let trader: string
    const answerAt = (text: string, n: number, answer: Parameters<ModelServer['mock']['on']>[1]) => scriptedAnswerAt(model, text, n, answer)
    const lastToolResults = () => lastToolResultsOf(model)
    const swap = swapCall
    const turnEnds = (res: ApiResponse) => chatTurnEnds(api, trader, res)

    beforeAll(async () => {
      trader = await agent('chat-trader', ['trading'])
    })
    beforeEach(() => model.mock.reset())

    it('4a. a model that names two different swaps call_0 in two rounds gets two swaps, each answered with its own', async () => {
      const text = 'two rounds of call_0'
      answerAt(text, 0, { toolCalls: [swap('call_0', '0.01')] })
      answerAt(text, 1, { toolCalls: [swap('call_0', '0.02')] })
      answerAt(text, 2, { content: 'Bought twice.' })
      const before = await sentTxs(trader)
      const turn = await turnEnds(await api('POST', `/agents/${trader}/chat`, { message: text }))
      expect(turn).toMatchObject({ status: 'completed', content: 'Bought twice.' })
      expect(await sentTxs(trader)).toBe(before + 2)
      expect(turn.toolCalls).toMatchObject([
        { id: 'call_0', status: 'ok', result: { status: 'confirmed', amountIn: '0.01' } },
        { id: 'call_0', status: 'ok', result: { status: 'confirmed', amountIn: '0.02' } },
      ])
      const [first, second] = turn.toolCalls
      expect(first.result.id).not.toBe(second.result.id)
      expect(first.result.txHash).not.toBe(second.result.txHash)
      // The model was told each swap's own outcome.
      expect(lastToolResults().map((r) => [r.amountIn, r.status, r.txHash])).toEqual([
        ['0.01', 'confirmed', first.result.txHash],
        ['0.02', 'confirmed', second.result.txHash],
      ])
      const hashes = (await q(`select hash from chain_tx where agent_id = $1 order by created_at desc limit 2`, [trader])).map((r) => r.hash)
      expect(hashes.sort()).toEqual([first.result.txHash, second.result.txHash].sort())
      // Both are mined swaps from the agent's wallet, each created in the commit of the turn's transition that recorded it.
      for (const c of turn.toolCalls) expect((await receipt(c.result.txHash)).status).toBe('success')
      expect(await createdWithParentsRecord(q, [first.result.id, second.result.id], 'tool.started')).toEqual([
        { parent_id: turn.id, same: true },
        { parent_id: turn.id, same: true },
      ])
    })

    it('4b. a swap that confirms after the HTTP wait: the turn waits in acting, then the model is told the confirmed tx hash', async () => {
      const text = 'swap while the chain is slow'
      answerAt(text, 0, { toolCalls: [swap('call_slow', '0.016')] })
      answerAt(text, 1, { content: 'Swapped, see the hash.' })
      const before = await sentTxs(trader)
      // The chain stops mining on its own: the swap's transaction waits in the mempool.
      await app.rpc('evm_setAutomine', [false])
      let res: ApiResponse
      try {
        res = await api('POST', `/agents/${trader}/chat`, { message: text })
        // The wait (2 s) ran out while the transaction waited to be mined: 202, the turn acting.
        expect(res.status, JSON.stringify(res.body)).toBe(202)
        expect(await sentTxs(trader)).toBe(before + 1)
        expect((await api('GET', `/agents/${trader}/chat/${res.body.id}`)).body.status).toBe('acting')
        expect(model.mock.getRequests()).toHaveLength(1)
        // Nothing waits for the chain in an effect: the tool call is done, the swap is the turn's child.
        await waitFor(async () => (await q(`select status from effect where actor_id = $1 and kind = 'chat.tool'`, [res.body.id]))[0]?.status === 'done', 10_000)
        const [child] = await q(`select kind, status from actor where parent_id = $1`, [res.body.id])
        expect(child).toMatchObject({ kind: 'walletop', status: 'confirming' })
      } finally {
        await app.rpc('evm_setAutomine', [true])
      }
      await app.rpc('evm_mine')
      const turn = await turnEnds(res)
      expect(turn).toMatchObject({ status: 'completed', content: 'Swapped, see the hash.' })
      const [tx] = await q(`select hash from chain_tx where agent_id = $1 order by created_at desc limit 1`, [trader])
      expect((await receipt(tx.hash)).status).toBe('success')
      expect(turn.toolCalls).toMatchObject([{ id: 'call_slow', status: 'ok', result: { status: 'confirmed', txHash: tx.hash } }])
      // The model's next request (the one after the swap confirmed) names the tx hash.
      expect(model.mock.getRequests()).toHaveLength(2)
      expect(lastToolResults()).toMatchObject([{ status: 'confirmed', txHash: tx.hash, amountIn: '0.016' }])
    })
  })
})

import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { erc20Abi, type Address } from 'viem'
import { startTestApp, type Api, type TestApp } from './support/app.ts'
import { waitFor } from './support/waitFor.ts'
import { automationUntil } from './support/automations.ts'

/**
 * Protective orders on the real app, Postgres and anvil, prices moved by scripted swaps of
 * another agent (a "whale" with a wide policy) on the seeded stock pools (1,000 tokens each):
 * a stop-loss fires once when crossed and sells its share of the holding; a trailing stop
 * follows a rise (its `high` shown) and fires on the drop from it; a bracket fires one side
 * only, also when the block that fires it held a move across both of its levels. A TWAP's
 * slices whose quoted price impact is over its limit are skipped and reported, each once.
 * (A TWAP across a kill -9: twapCrash.test.ts.)
 */
let app: TestApp
let api: Api

const q = async (sql: string, values: unknown[] = []) => (await app.services.pool.query(sql, values)).rows
const until = (id: string, done: (a: any) => boolean, timeoutMs?: number) => automationUntil(api, id, done, timeoutMs)
const rpc = (method: string, params: unknown[] = []) => app.services.chain!.publicClient.request({ method: method as never, params: params as never })
const stock = (symbol: string) => app.services.chain!.manifest.stocks.find((s) => s.symbol === symbol)!.address as Address
const priceOf = async (symbol: string) => Number((await api('GET', `/price?tokens=${symbol}`)).body.prices[0].priceUsd)
const swapsOf = async (automationId: string) => (await q(`select w.id from wallet_op w where w.parent_id = $1`, [automationId])).length
const WIDE = { max_trade_usd: '1000000', max_daily_usd: '10000000', max_price_impact_bps: 5000 }

async function agent(name: string, usdc: string, policy?: object) {
  const created = await api('POST', '/agents', { name, skills: ['trading'], ...(policy ? { policy } : {}) })
  expect(created.status, JSON.stringify(created.body)).toBe(201)
  expect((await api('POST', '/dev/faucet', { agentId: created.body.id, eth: '2', usdc })).status).toBe(200)
  expect((await api('POST', `/agents/${created.body.id}/start`)).status).toBe(200)
  return { id: created.body.id as string, wallet: created.body.walletAddress as Address }
}
const balanceOf = (token: Address, wallet: Address) => app.services.chain!.publicClient.readContract({ address: token, abi: erc20Abi, functionName: 'balanceOf', args: [wallet] })

async function swap(agentId: string, tokenIn: string, tokenOut: string, amountIn: string) {
  const res = await api('POST', '/swap/execute', { agentId, tokenIn, tokenOut, amountIn, slippageBps: 5000 })
  expect(res.body.status, JSON.stringify(res.body)).toBe('confirmed')
  return res.body as { txHash: string }
}

/** Waits until the indexer (and so the trigger feed) has passed the block of `txHash`. */
async function indexedPast(txHash: string) {
  const block = Number((await app.services.chain!.publicClient.getTransactionReceipt({ hash: txHash as `0x${string}` })).blockNumber)
  await waitFor(async () => Number((await q(`select block_number from automation_trigger_checkpoint`))[0]?.block_number ?? -1) >= block, 20_000)
}

beforeAll(async () => {
  app = await startTestApp({ RATE_LIMIT_PER_KEY: '1000000', RATE_LIMIT_PER_IP: '1000000', AUTOMATION_MIN_INTERVAL_SECONDS: '1' }, { withChain: true })
  ;({ api } = await app.account())
}, 120_000)
afterAll(async () => {
  await rpc('evm_setAutomine', [true]).catch(() => {})
  await app?.close()
})
beforeEach(async () => {
  await rpc('evm_setAutomine', [true])
})

describe('protective and sliced orders', () => {
  it('a stop-loss fires once when crossed: one swap, the holding reduced by its share, the level shown', { timeout: 120_000 }, async () => {
    const whale = await agent('sl-whale', '100000', WIDE)
    const holder = await agent('sl-holder', '2000')
    await swap(whale.id, 'USDC', 'TSLAx', '20000')
    await swap(holder.id, 'USDC', 'TSLAx', '700')
    const tsla = stock('TSLAx')
    const held = await balanceOf(tsla, holder.wallet)
    const level = ((await priceOf('TSLAx')) * 0.97).toFixed(4)

    // A level already met is refused, named as written.
    const met = await api('POST', '/automations', { agent_id: holder.id, name: 'x', kind: 'stop_loss', stop_loss: { token: 'TSLAx', priceUsd: '100000' } })
    expect(met.status).toBe(422)
    expect(Object.keys(met.body.field_errors)).toEqual(['stop_loss.priceUsd'])

    const created = await api('POST', '/automations', { agent_id: holder.id, name: 'stop', kind: 'stop_loss', stop_loss: { token: 'TSLAx', priceUsd: level, share: 0.5 } })
    expect(created.status, JSON.stringify(created.body)).toBe(201)
    expect(created.body).toMatchObject({ kind: 'stop_loss', status: 'armed', triggerType: 'price_threshold', level, share: 0.5, trigger: { mint: 'TSLAx', operator: 'lte', priceUsd: level } })
    expect((await api('GET', `/automations/${created.body.id}`)).body).toMatchObject({ kind: 'stop_loss', level })

    // The whale sells: the price falls under the level.
    const whaleTsla = await balanceOf(tsla, whale.wallet)
    const drop = await swap(whale.id, 'TSLAx', 'USDC', String(Number(whaleTsla / 10n ** 16n) / 100))
    expect(await priceOf('TSLAx')).toBeLessThanOrEqual(Number(level))
    const done = await until(created.body.id, (a) => a.status === 'completed')
    expect(done).toMatchObject({ runCount: 1, completedReason: 'fired_once' })
    expect(done.firings).toMatchObject([{ number: 1, source: 'price', outcome: 'ok', txHash: expect.any(String) }])
    expect(await balanceOf(tsla, holder.wallet)).toBe(held - held / 2n)

    // Later blocks still under the level fire nothing more.
    await indexedPast((await swap(whale.id, 'USDC', 'TSLAx', '10')).txHash)
    await indexedPast(drop.txHash)
    expect(await swapsOf(created.body.id)).toBe(1)
  })

  it('a trailing stop follows a rise (its high shown) and fires on the drop from it', { timeout: 120_000 }, async () => {
    const whale = await agent('tr-whale', '100000', WIDE)
    const holder = await agent('tr-holder', '2000')
    await swap(holder.id, 'USDC', 'NVDAx', '500')
    const nvda = stock('NVDAx')
    const p0 = await priceOf('NVDAx')
    const created = await api('POST', '/automations', { agent_id: holder.id, name: 'trail', kind: 'trailing_stop', trailing_stop: { token: 'NVDAx', trailPct: 5 } })
    expect(created.status, JSON.stringify(created.body)).toBe(201)
    expect(Number(created.body.high)).toBe(p0)
    expect(Number(created.body.level)).toBeCloseTo(p0 * 0.95, 6)

    // A rise: the high follows it.
    const up = await swap(whale.id, 'USDC', 'NVDAx', '20000')
    const high = await priceOf('NVDAx')
    expect(high).toBeGreaterThan(p0 * 1.15)
    const risen = await until(created.body.id, (a) => Number(a.high) === high)
    expect(risen).toMatchObject({ status: 'armed', runCount: 0 })
    expect(Number(risen.level)).toBeCloseTo(high * 0.95, 6)
    await indexedPast(up.txHash)

    // A drop of more than 5 % from the high, still well above where it was armed: it fires.
    const bought = await balanceOf(nvda, whale.wallet)
    await swap(whale.id, 'NVDAx', 'USDC', String(Number((bought * 40n) / 100n / 10n ** 16n) / 100))
    const now = await priceOf('NVDAx')
    expect(now).toBeLessThanOrEqual(high * 0.95)
    expect(now).toBeGreaterThan(p0)
    const done = await until(created.body.id, (a) => a.status === 'completed')
    expect(done).toMatchObject({ runCount: 1, completedReason: 'fired_once', firings: [{ source: 'price', outcome: 'ok' }] })
    expect(Number(done.high)).toBe(high)
    expect(await balanceOf(nvda, holder.wallet)).toBe(0n)
    expect(await swapsOf(created.body.id)).toBe(1)
  })

  it('a bracket fires one side only: the take-profit, and the stop-loss crossed after it fires nothing', { timeout: 120_000 }, async () => {
    const whale = await agent('br-whale', '100000', WIDE)
    const holder = await agent('br-holder', '2000')
    await swap(whale.id, 'USDC', 'AAPLx', '15000')
    await swap(holder.id, 'USDC', 'AAPLx', '500')
    const p = await priceOf('AAPLx')
    const body = { agent_id: holder.id, name: 'bracket', kind: 'bracket', bracket: { token: 'AAPLx', takeProfitUsd: (p * 1.05).toFixed(4), stopLossUsd: (p * 0.95).toFixed(4) } }
    const wrong = await api('POST', '/automations', { ...body, bracket: { ...body.bracket, takeProfitUsd: (p * 0.9).toFixed(4) } })
    expect(wrong.status).toBe(422)
    expect(Object.keys(wrong.body.field_errors)).toEqual(['bracket.takeProfitUsd'])
    const created = await api('POST', '/automations', body)
    expect(created.status, JSON.stringify(created.body)).toBe(201)
    expect(created.body).toMatchObject({ kind: 'bracket', takeProfit: { status: 'waiting' }, stopLoss: { status: 'waiting' } })

    await swap(whale.id, 'USDC', 'AAPLx', '20000')
    const done = await until(created.body.id, (a) => a.status === 'completed')
    expect(done).toMatchObject({ runCount: 1, takeProfit: { status: 'filled' }, stopLoss: { status: 'cancelled' }, firings: [{ outcome: 'ok', side: 'take_profit' }] })
    const whaleAapl = await balanceOf(stock('AAPLx'), whale.wallet)
    const down = await swap(whale.id, 'AAPLx', 'USDC', String(Number(whaleAapl / 10n ** 16n) / 100))
    expect(await priceOf('AAPLx')).toBeLessThan(Number(body.bracket.stopLossUsd))
    await indexedPast(down.txHash)
    expect(await swapsOf(created.body.id)).toBe(1)
  })

  it('a bracket whose block moved the price across both levels fires one side only: where the block closed', { timeout: 120_000 }, async () => {
    const buyer = await agent('both-buyer', '100000', WIDE)
    const seller = await agent('both-seller', '100000', WIDE)
    const holder = await agent('both-holder', '2000')
    await swap(seller.id, 'USDC', 'TSLAx', '30000')
    await swap(holder.id, 'USDC', 'TSLAx', '500')
    const p = await priceOf('TSLAx')
    const tp = p * 1.04
    const sl = p * 0.96
    const created = await api('POST', '/automations', { agent_id: holder.id, name: 'both', kind: 'bracket', bracket: { token: 'TSLAx', takeProfitUsd: tp.toFixed(4), stopLossUsd: sl.toFixed(4) } })
    expect(created.status, JSON.stringify(created.body)).toBe(201)
    const sellerTsla = await balanceOf(stock('TSLAx'), seller.wallet)

    // One block: a buy that alone takes the price over the take-profit, then a larger sell under the stop-loss.
    const buyQuote = await api('POST', '/swap/quote', { agentId: buyer.id, tokenIn: 'USDC', tokenOut: 'TSLAx', amountIn: '20000', slippageBps: 5000 })
    // Its average price 4 % or more over the spot puts the spot after it about twice that over: past the take-profit.
    expect(buyQuote.body.priceImpactBps).toBeGreaterThan(400)
    const pending = async (w: Address) => (await app.services.chain!.publicClient.getTransactionCount({ address: w, blockTag: 'pending' })) > (await app.services.chain!.publicClient.getTransactionCount({ address: w }))
    await rpc('evm_setAutomine', [false])
    let sends: Promise<unknown>[] = []
    try {
      sends = [api('POST', '/swap/execute', { agentId: buyer.id, tokenIn: 'USDC', tokenOut: 'TSLAx', amountIn: '20000', slippageBps: 5000 })]
      await waitFor(() => pending(buyer.wallet), 30_000)
      sends.push(api('POST', '/swap/execute', { agentId: seller.id, tokenIn: 'TSLAx', tokenOut: 'USDC', amountIn: String(Number(sellerTsla / 10n ** 16n) / 100), slippageBps: 5000 }))
      await waitFor(() => pending(seller.wallet), 30_000)
      await rpc('evm_mine')
    } finally {
      await rpc('evm_setAutomine', [true])
    }
    await Promise.all(sends)
    expect(await priceOf('TSLAx')).toBeLessThan(sl)
    const done = await until(created.body.id, (a) => a.status === 'completed')
    expect(done).toMatchObject({ runCount: 1, takeProfit: { status: 'cancelled' }, stopLoss: { status: 'filled' }, firings: [{ outcome: 'ok', side: 'stop_loss' }] })
    expect(await swapsOf(created.body.id)).toBe(1)
    expect(await balanceOf(stock('TSLAx'), holder.wallet)).toBe(0n)
  })

  it('a TWAP slice whose quoted price impact is over maxPriceImpactBps is skipped and reported; it counts, nothing is swapped', { timeout: 120_000 }, async () => {
    const trader = await agent('twap-trader', '100000')
    const created = await api('POST', '/automations', {
      agent_id: trader.id, name: 'big', kind: 'twap', twap: { tokenIn: 'USDC', tokenOut: 'AAPLx', amountIn: '60000', slices: 3, overSeconds: 3, maxPriceImpactBps: 10 },
    })
    expect(created.status, JSON.stringify(created.body)).toBe(201)
    const done = await until(created.body.id, (a) => a.status === 'completed')
    expect(done).toMatchObject({ slices: 3, slicesDone: 3, slicesLeft: 0, runCount: 3, completedReason: 'max_firings_reached' })
    expect([...done.firings].reverse().map((f: { slice: number; outcome: string }) => [f.slice, f.outcome])).toEqual([[1, 'skipped'], [2, 'skipped'], [3, 'skipped']])
    for (const f of done.firings) expect(f.reason).toMatch(/^price_impact_exceeded: slice \d of 3 \(20000\) quoted \d+ bps, over maxPriceImpactBps 10\.$/)
    expect(await swapsOf(created.body.id)).toBe(0)
  })
})

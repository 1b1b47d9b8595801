import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { formatUnits, parseUnits } from 'viem'
import { startTestApp, type Api, type TestApp } from './support/app.ts'
import { cents, usd } from './support/cents.ts'

/**
 * Cost basis and PnL of a wallet whose trades are scripted: two buys of TSLAx with USDC and a
 * sale of part of it, through POST /swap/execute; the portfolio's figures equal a hand
 * computation (average cost, in cents) from the swaps' own recorded values.
 */
let app: TestApp
let api: Api
let agent: { id: string; walletAddress: string }

async function swap(tokenIn: string, tokenOut: string, amountIn: string) {
  const res = await api('POST', '/swap/execute', { agentId: agent.id, tokenIn, tokenOut, amountIn, slippageBps: 300 })
  expect(res.body, JSON.stringify(res.body)).toMatchObject({ status: 'confirmed' })
  return res.body as { valueInUsd: string; amountOut: string }
}

beforeAll(async () => {
  app = await startTestApp({}, { withChain: true })
  api = (await app.account()).api
  agent = (await api('POST', '/agents', { name: 'pnl', skills: ['trading'], policy: { max_trade_usd: '5000', max_daily_usd: '10000' } })).body
  expect((await api('POST', '/dev/faucet', { agentId: agent.id, eth: '2', usdc: '5000' })).status).toBe(200)
})
afterAll(async () => {
  await app?.close()
})

describe('cost basis and PnL', () => {
  it('scripted buys and a sale: basis, realised and unrealised PnL equal the hand computation to the cent', async () => {
    const b1 = await swap('USDC', 'TSLAx', '1000')
    const b2 = await swap('USDC', 'TSLAx', '500')
    const held = parseUnits(b1.amountOut, 18) + parseUnits(b2.amountOut, 18)
    // A third of the holding, to six decimals.
    const sold = formatUnits(((held / 3n) / 10n ** 12n) * 10n ** 12n, 18)
    const s = await swap('TSLAx', 'USDC', sold)
    const soldExact = parseUnits(sold, 18)

    // Average cost: the sale takes basis x sold / held off the basis; proceeds minus that are realised.
    const basis = cents(b1.valueInUsd) + cents(b2.valueInUsd)
    const share = (basis * soldExact) / held
    const tradingRealised = cents(s.valueInUsd) - share
    const remaining = basis - share
    // Gas: each operation's wei (every receipt's gasUsed x effectiveGasPrice) at $3,000 per ETH, to the cent.
    expect((await api('GET', '/price?tokens=ETH')).body.prices[0].priceUsd).toBe('3000')
    const { rows: ops } = await app.services.pool.query<{ wei: string }>(
      `select x.snapshot->'context'->'result'->>'gasWei' as wei from wallet_op w join actor x on x.id = w.id where w.agent_id = $1`, [agent.id])
    const { rows: txs } = await app.services.pool.query<{ hash: `0x${string}` }>(`select hash from chain_tx where agent_id = $1 and status = 'confirmed'`, [agent.id])
    let wei = 0n
    for (const t of txs) {
      const r = await app.services.chain!.publicClient.getTransactionReceipt({ hash: t.hash })
      wei += r.gasUsed * r.effectiveGasPrice
    }
    expect(ops.reduce((s, o) => s + BigInt(o.wei), 0n)).toBe(wei)
    const gas = ops.reduce((s, o) => s + (BigInt(o.wei) * 3000n) / 10n ** 16n, 0n)
    expect(gas).toBeGreaterThan(0n)
    const realised = tradingRealised - gas

    const p = await api('GET', `/wallet/portfolio?agentId=${agent.id}`)
    expect(p.status).toBe(200)
    const tsla = p.body.holdings.find((h: { symbol: string }) => h.symbol === 'TSLAx')
    expect(tsla).toMatchObject({ costBasisUsd: usd(remaining), realisedPnlUsd: usd(tradingRealised) })
    expect(tsla.unrealisedPnlUsd).toBe(usd(cents(tsla.valueUsd) - remaining))
    expect(tsla.unrealizedPnlUsd).toBe(tsla.unrealisedPnlUsd)
    // USDC from the faucet had no recorded cost: spending it realised nothing; the sale's USDC has its value as basis.
    const usdcLine = p.body.holdings.find((h: { symbol: string }) => h.symbol === 'USDC')
    expect(usdcLine).toMatchObject({ costBasisUsd: s.valueInUsd, realisedPnlUsd: '0.00' })
    expect(p.body).toMatchObject({ realisedPnlUsd: usd(realised), gasUsd: usd(gas) })
    expect(p.body.costBasisUsd).toBe(usd(remaining + cents(s.valueInUsd)))
    expect(p.body.unrealisedPnlUsd).toBe(usd(cents(tsla.valueUsd) - remaining + cents(usdcLine.valueUsd) - cents(s.valueInUsd)))
  })

  it('GET /agents/:id/performance: the ledger over time, and the PnL now', async () => {
    const p = await api('GET', `/wallet/portfolio?agentId=${agent.id}`)
    const res = await api('GET', `/agents/${agent.id}/performance?interval=1h`)
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body).toMatchObject({ agentId: agent.id, interval: '1h' })
    expect(res.body.points).toHaveLength(31)
    expect(res.body.points[0]).toMatchObject({ costBasisUsd: '0.00', realisedPnlUsd: '0.00', withdrawalsUsd: '0.00', operations: 0 })
    expect(res.body.points.at(-1)).toMatchObject({ costBasisUsd: p.body.costBasisUsd, realisedPnlUsd: p.body.realisedPnlUsd, operations: 3 })
    const realised = cents(p.body.realisedPnlUsd)
    const unrealised = cents(res.body.now.unrealisedPnlUsd)
    expect(res.body.now).toMatchObject({ totalValueUsd: expect.any(String), realisedPnlUsd: p.body.realisedPnlUsd, pnlUsd: usd(realised + unrealised) })
    const bad = await api('GET', `/agents/${agent.id}/performance?interval=1m&from=2020-01-01`)
    expect(Object.keys(bad.body.field_errors).sort()).toEqual(['interval'])
    expect((await api('GET', `/agents/${agent.id}/performance?interval=1h&from=2020-01-01`)).body.field_errors).toHaveProperty('from')
    const other = (await app.account({ name: 'perf-other' })).api
    expect((await other('GET', `/agents/${agent.id}/performance`)).status).toBe(404)
  })

  it('the leaderboard ranks by realised PnL with sort_by=pnl', async () => {
    const p = await api('GET', `/wallet/portfolio?agentId=${agent.id}`)
    const res = await api('GET', '/leaderboard?sort_by=pnl&limit=10')
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ sortBy: 'pnl', total: 1, nextCursor: null })
    expect(res.body.leaderboard).toEqual([{ rank: 1, agentId: agent.id, name: 'pnl', realisedPnlUsd: p.body.realisedPnlUsd, operations: 3 }])
    expect((await api('GET', '/leaderboard?sort_by=luck')).body.field_errors).toHaveProperty('sort_by')
    expect((await api('GET', '/leaderboard')).body).not.toHaveProperty('sortBy')
  })

  it('GET /portfolio?wallet= answers the reference client\'s shape for the account\'s own agent wallet only', async () => {
    const res = await api('GET', `/portfolio?wallet=${agent.walletAddress.toUpperCase().replace('0X', '0x')}`)
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body).toMatchObject({
      wallet: agent.walletAddress, totalValueUsd: expect.any(Number), costBasisUsd: expect.any(Number),
      unrealisedPnlUsd: expect.any(Number), realisedPnlUsd: expect.any(Number), gasUsd: expect.any(Number), meta: { requestId: expect.any(String) },
    })
    const tsla = res.body.holdings.find((h: { symbol: string }) => h.symbol === 'TSLAx')
    expect(tsla).toEqual({
      mint: expect.stringMatching(/^0x[0-9a-f]{40}$/), symbol: 'TSLAx', name: expect.any(String), balance: expect.any(Number), uiBalance: expect.any(Number),
      valueUsd: expect.any(Number), priceUsd: expect.any(Number), change24h: expect.any(Number),
      costBasisUsd: expect.any(Number), unrealisedPnlUsd: expect.any(Number), realisedPnlUsd: expect.any(Number),
    })
    // The index follows the stock's USDC pool: its 24 h change is the top movers' (the agent's buys moved it).
    const movers = await api('GET', '/signals/top-movers?timeframe=24h&limit=100')
    expect(tsla.change24h).toBe(movers.body.movers.find((m: { mint: string }) => m.mint === tsla.mint).change)
    expect(tsla.change24h).toBeGreaterThan(0)
    const eth = res.body.holdings.find((h: { symbol: string }) => h.symbol === 'ETH')
    expect(eth).toMatchObject({ mint: null, name: 'Ether', uiBalance: expect.any(Number) })
    const same = await api('GET', `/wallet/portfolio?agentId=${agent.id}`)
    expect(res.body.totalValueUsd).toBe(Number(same.body.totalValueUsd))

    const other = (await app.account({ name: 'other' })).api
    expect((await other('GET', `/portfolio?wallet=${agent.walletAddress}`)).status).toBe(404)
    expect((await api('GET', `/portfolio?wallet=0x${'ab'.repeat(20)}`)).status).toBe(404)
    const bad = await api('GET', '/portfolio?wallet=nope')
    expect(bad.status).toBe(422)
    expect(bad.body.field_errors).toHaveProperty('wallet')
  })

  it('a deleted agent leaves the PnL leaderboard (its state is its actor\'s)', async () => {
    const second = (await api('POST', '/agents', { name: 'pnl-2', skills: ['trading'], policy: { max_trade_usd: '5000', max_daily_usd: '10000' } })).body
    expect((await api('POST', '/dev/faucet', { agentId: second.id, eth: '1', usdc: '100' })).status).toBe(200)
    const res = await api('POST', '/swap/execute', { agentId: second.id, tokenIn: 'USDC', tokenOut: 'TSLAx', amountIn: '50', slippageBps: 300 })
    expect(res.body, JSON.stringify(res.body)).toMatchObject({ status: 'confirmed' })
    const board = async () => {
      await new Promise((r) => setTimeout(r, 2100)) // past the figures' 2 s cache
      return (await api('GET', '/leaderboard?sort_by=pnl&limit=10')).body.leaderboard.map((e: { agentId: string }) => e.agentId).sort()
    }
    expect(await board()).toEqual([agent.id, second.id].sort())
    expect((await api('DELETE', `/agents/${second.id}`)).status).toBe(200)
    expect(await board()).toEqual([agent.id])
  })
})

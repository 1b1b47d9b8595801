import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { formatUnits, getAddress, parseUnits } from 'viem'
import { apiClient, startTestApp, type Api, type TestApp } from './support/app.ts'
import { cents, usd } from './support/cents.ts'

/**
 * Paper agents (docs/api.md, "Paper agents"): the same swap and transfer API, filled against the
 * real pools at the block into a virtual ledger, nothing sent (the wallet's nonce on chain never
 * moves); the portfolio's PnL equals a hand computation (average cost, in cents) from the swaps'
 * own recorded values; a separate leaderboard; a clone is live.
 */
let app: TestApp
let api: Api
let apiKey: string
type Agent = { id: string; name: string; walletAddress: `0x${string}`; mode: string; model: string; skills: string[]; policy: Record<string, unknown> }
let paper: Agent
let live: Agent
const key = () => ({ 'idempotency-key': randomUUID() })
/** Basis points as the leaderboard's percent ("-0.31"). */
const percent = (bps: bigint) => `${bps < 0n ? '-' : ''}${(bps < 0n ? -bps : bps) / 100n}.${String((bps < 0n ? -bps : bps) % 100n).padStart(2, '0')}`

beforeAll(async () => {
  app = await startTestApp({ WHITELIST_HOLD_SECONDS: '0' }, { withChain: true })
  ;({ api, apiKey } = await app.account())
  const policy = { max_trade_usd: '5000', max_daily_usd: '100000' }
  paper = (await api('POST', '/agents', { name: 'paper', mode: 'paper', skills: ['trading'], policy })).body
  live = (await api('POST', '/agents', { name: 'live', skills: ['trading'], policy })).body
})
afterAll(async () => {
  await app?.close()
})

const nonce = (address: `0x${string}`) => app.services.chain!.publicClient.getTransactionCount({ address: getAddress(address), blockTag: 'latest' })

async function swap(tokenIn: string, tokenOut: string, amountIn: string) {
  const res = await api('POST', '/swap/execute', { agentId: paper.id, tokenIn, tokenOut, amountIn, slippageBps: 300 }, key())
  expect(res.body, JSON.stringify(res.body)).toMatchObject({ status: 'confirmed', txHash: expect.stringMatching(/^paper:/), gasUsed: '0' })
  return res.body as { valueInUsd: string; amountIn: string; amountOut: string; amountOutBaseUnits: string; expectedAmountOut: string; tokenIn: { address: string }; tokenOut: { address: string } }
}

describe('paper agents', () => {
  it('mode is set at creation, shown, and never changed by an update', async () => {
    expect(paper.mode).toBe('paper')
    expect(live.mode).toBe('live')
    const patch = await api('PATCH', `/agents/${paper.id}`, { mode: 'live' })
    expect(patch.status).toBe(422)
    expect(patch.body).toMatchObject({ code: 'mode_immutable', field_errors: { mode: expect.any(String) } })
    expect((await api('GET', `/agents/${paper.id}`)).body.mode).toBe('paper')
    const bad = await api('POST', '/agents', { name: 'x', mode: 'fantasy' })
    expect(bad.status).toBe(422)
    expect(Object.keys(bad.body.field_errors)).toEqual(['mode'])
  })

  it('a virtual deposit funds a paper agent only', async () => {
    const refused = await api('POST', `/agents/${live.id}/paper/deposit`, { token: 'USDC', amount: '10' })
    expect(refused.status).toBe(422)
    expect(refused.body.code).toBe('not_paper_agent')
    const badAmount = await api('POST', `/agents/${paper.id}/paper/deposit`, { token: 'USDC', amount: '1.1234567' })
    expect(badAmount.body.field_errors).toHaveProperty('amount')
    const k = key()
    const dep = await api('POST', `/agents/${paper.id}/paper/deposit`, { token: 'USDC', amount: '5000' }, k)
    expect(dep.status, JSON.stringify(dep.body)).toBe(201)
    expect(dep.body).toMatchObject({ agentId: paper.id, amount: '5000', amountBaseUnits: '5000000000', valueUsd: '5000.00' })
    // The same key again: the same deposit, not a second one.
    expect((await api('POST', `/agents/${paper.id}/paper/deposit`, { token: 'USDC', amount: '5000' }, k)).body.id).toBe(dep.body.id)
  })

  it("ten swaps leave the wallet's nonce unchanged, and the PnL equals the hand computation to the cent", async () => {
    const before = await nonce(paper.walletAddress)
    const deposit = (await api('GET', `/wallet/portfolio?agentId=${paper.id}`)).body.holdings.find((h: { symbol: string }) => h.symbol === 'USDC')
    expect(deposit).toMatchObject({ balance: '5000', costBasisUsd: '5000.00' })
    const fills = []
    for (const amount of ['400', '300', '200', '500', '100', '250']) fills.push(await swap('USDC', 'TSLAx', amount))
    let tsla = fills.reduce((s, f) => s + BigInt(f.amountOutBaseUnits), 0n)
    for (const part of [5n, 4n, 3n, 2n]) {
      // A part of the holding, to six decimals.
      const sold = ((tsla / part) / 10n ** 12n) * 10n ** 12n
      fills.push(await swap('TSLAx', 'USDC', (Number(sold / 10n ** 12n) / 1e6).toFixed(6)))
      tsla -= sold
    }
    expect(fills).toHaveLength(10)
    // Filled at the quote of the block (no block is mined by a paper fill): the amount the swap expected.
    for (const f of fills) expect(f.amountOut).toBe(f.expectedAmountOut)
    expect(await nonce(paper.walletAddress)).toBe(before)
    expect(before).toBe(0)
    const { rows } = await app.services.pool.query(`select 1 from chain_tx where agent_id = $1`, [paper.id])
    expect(rows).toHaveLength(0)

    // By hand, average cost in cents: the deposit is USDC's basis; each swap disposes of its input for its recorded USD value and acquires its output at it.
    const book = new Map<string, { amount: bigint; basis: bigint; realised: bigint }>()
    const pos = (t: string) => book.get(t) ?? (book.set(t, { amount: 0n, basis: 0n, realised: 0n }), book.get(t)!)
    const usdc = fills[0]!.tokenIn.address
    Object.assign(pos(usdc), { amount: parseUnits('5000', 6), basis: cents('5000.00') })
    for (const f of fills) {
      const value = cents(f.valueInUsd)
      const out = pos(f.tokenIn.address)
      const amountIn = parseUnits(f.amountIn, f.tokenIn.address === usdc ? 6 : 18)
      const known = amountIn < out.amount ? amountIn : out.amount
      const share = (out.basis * known) / out.amount
      out.realised += (value * known) / amountIn - share
      out.basis -= share
      out.amount -= known
      const into = pos(f.tokenOut.address)
      into.amount += BigInt(f.amountOutBaseUnits)
      into.basis += value
    }
    const realised = [...book.values()].reduce((s, p) => s + p.realised, 0n)
    const p = await api('GET', `/wallet/portfolio?agentId=${paper.id}`)
    expect(p.status).toBe(200)
    expect(p.body).toMatchObject({ mode: 'paper', realisedPnlUsd: usd(realised), gasUsd: '0.00' })
    for (const [address, expected] of book) {
      const line = p.body.holdings.find((h: { address: string | null }) => h.address?.toLowerCase() === address.toLowerCase())
      expect(line).toMatchObject({ balance: formatUnits(expected.amount, line.decimals), costBasisUsd: usd(expected.basis), realisedPnlUsd: usd(expected.realised) })
      expect(line.unrealisedPnlUsd).toBe(usd(cents(line.valueUsd) - expected.basis))
    }
    expect(realised).not.toBe(0n)

    // The performance and the separate leaderboard read the same ledger.
    const perf = await api('GET', `/agents/${paper.id}/performance?interval=1h`)
    expect(perf.body.points.at(-1)).toMatchObject({ realisedPnlUsd: usd(realised), depositsUsd: '5000.00', operations: 11 })
    const liveBoard = await api('GET', '/leaderboard?sort_by=pnl&limit=10')
    expect(liveBoard.body.leaderboard.map((r: { agentId: string }) => r.agentId)).not.toContain(paper.id)
    const paperBoard = await api('GET', '/leaderboard?sort_by=pnl&mode=paper&limit=10')
    expect(paperBoard.body.leaderboard).toEqual([
      { rank: 1, agentId: paper.id, name: 'paper', realisedPnlUsd: usd(realised), depositedUsd: '5000.00', returnPct: percent((realised * 10_000n) / 500_000n), operations: 11 },
    ])
    expect((await api('GET', '/leaderboard?sort_by=pnl&mode=demo')).body.field_errors).toHaveProperty('mode')
  })

  it('a swap beyond the virtual balance fails like a real one; a transfer moves virtual funds out; a fee claim and a market listing are refused (a launch: test/paperLaunch.test.ts)', async () => {
    const short = await api('POST', '/swap/execute', { agentId: paper.id, tokenIn: 'USDC', tokenOut: 'TSLAx', amountIn: '4999', slippageBps: 300 }, key())
    expect(short.status).toBe(422)
    expect(short.body.code).toBe('insufficient_funds')
    const to = '0x2222222222222222222222222222222222222222'
    expect((await api('POST', `/agents/${paper.id}/whitelist`, { address: to })).status).toBe(201)
    const usdcBefore = (await api('GET', `/wallet/portfolio?agentId=${paper.id}`)).body.holdings.find((h: { symbol: string }) => h.symbol === 'USDC')
    const t = await api('POST', '/wallet/transfer', { agentId: paper.id, to, token: 'USDC', amount: '10' }, key())
    expect(t.body, JSON.stringify(t.body)).toMatchObject({ status: 'confirmed', txHash: expect.stringMatching(/^paper:/) })
    const usdcAfter = (await api('GET', `/wallet/portfolio?agentId=${paper.id}`)).body.holdings.find((h: { symbol: string }) => h.symbol === 'USDC')
    expect(parseUnits(usdcBefore.balance, 6) - parseUnits(usdcAfter.balance, 6)).toBe(10_000_000n)
    const tooMuch = await api('POST', '/wallet/transfer', { agentId: paper.id, to, token: 'USDC', amount: '100000' }, key())
    expect(tooMuch.body.code).toBe('insufficient_funds')
    const claim = await api('POST', '/fees/claim', { agentId: paper.id }, key())
    expect(claim.body.code).toBe('paper_unsupported')
    const listing = await api('POST', '/market', { agentId: paper.id, priceCredits: 100 })
    expect(listing.status).toBe(422)
    expect(listing.body.code).toBe('paper_unsupported')
    expect(await nonce(paper.walletAddress)).toBe(0)
  })

  it('POST /agents/:id/clone makes a live agent from its settings; a retry with the same key answers the same clone', async () => {
    const k = key()
    const c = await api('POST', `/agents/${paper.id}/clone`, {}, k)
    expect(c.status, JSON.stringify(c.body)).toBe(201)
    expect(c.body).toMatchObject({ name: 'paper (copy)', mode: 'live', model: paper.model, skills: paper.skills, status: 'stopped' })
    expect(c.body.policy).toEqual((await api('GET', `/agents/${paper.id}`)).body.policy)
    expect(c.body.walletAddress).not.toBe(paper.walletAddress)
    expect(c.body.id).not.toBe(paper.id)
    const again = await api('POST', `/agents/${paper.id}/clone`, {}, k)
    expect(again.body.id).toBe(c.body.id)
    // Nothing of the source's funds or whitelist comes along.
    expect((await api('GET', `/agents/${c.body.id}/whitelist`)).body.whitelist).toEqual([])
    const named = await api('POST', `/agents/${paper.id}/clone`, { name: 'graduated' })
    expect(named.body).toMatchObject({ name: 'graduated', mode: 'live' })
    expect((await api('POST', `/agents/${paper.id}/clone`, { name: '' })).body.field_errors).toHaveProperty('name')
    expect((await api('POST', `/agents/${randomUUID()}/clone`, {})).status).toBe(404)
  })

  it('the tools follow: create_agent makes a paper agent, swap_execute fills an ETH swap from its virtual ETH, nothing sent', async () => {
    const call = (name: string, args: Record<string, unknown>) => apiClient(`${app.url}/api`, apiKey)('POST', '/mcp/call', { name, arguments: args })
    const made = await call('create_agent', { name: 'tool paper', mode: 'paper', policy: { max_trade_usd: '5000' } })
    expect(made.status, JSON.stringify(made.body)).toBe(200)
    const agent = made.body.result as Agent
    expect(agent.mode).toBe('paper')
    expect((await api('POST', `/agents/${agent.id}/paper/deposit`, { token: 'ETH', amount: '1' })).status).toBe(201)
    const swap = await call('swap_execute', { agent_id: agent.id, tokenIn: 'ETH', tokenOut: 'USDC', amountIn: '0.25', confirm: true, idempotencyKey: 'paper-tool-1' })
    expect(swap.body.result, JSON.stringify(swap.body)).toMatchObject({ status: 'confirmed', txHash: expect.stringMatching(/^paper:/) })
    const p = (await api('GET', `/wallet/portfolio?agentId=${agent.id}`)).body
    expect(p.holdings.find((h: { symbol: string }) => h.symbol === 'ETH')).toMatchObject({ balance: '0.75' })
    expect(p.holdings.find((h: { symbol: string }) => h.symbol === 'USDC').balance).toBe(swap.body.result.amountOut)
    expect(await nonce(agent.walletAddress)).toBe(0)
    // A transfer's preview (the tool without confirm) costs a paper agent no gas.
    const to = '0x3333333333333333333333333333333333333333'
    expect((await api('POST', `/agents/${agent.id}/whitelist`, { address: to })).status).toBe(201)
    const preview = await call('wallet_transfer', { agent_id: agent.id, to, token: 'ETH', amount: '0.5' })
    expect(preview.body.result, JSON.stringify(preview.body)).toMatchObject({ sent: false, amount: '0.5', fee: { gasLimit: '0', maxFeeUsd: '0.00' } })
    const patched = await call('update_agent', { agent_id: agent.id, mode: 'live' })
    expect(patched.status).toBe(422)
    expect((await api('GET', `/agents/${agent.id}`)).body.mode).toBe('paper')
  })

  it('two swaps at once that the virtual balance pays only one of: one fills, the other fails insufficient_funds, the balance never goes below zero', async () => {
    const racer = (await api('POST', '/agents', { name: 'racer', mode: 'paper', policy: { max_trade_usd: '5000' } })).body as Agent
    expect((await api('POST', `/agents/${racer.id}/paper/deposit`, { token: 'USDC', amount: '100' })).status).toBe(201)
    const body = { agentId: racer.id, tokenIn: 'USDC', tokenOut: 'TSLAx', amountIn: '60', slippageBps: 300 }
    const answers = await Promise.all([api('POST', '/swap/execute', body, key()), api('POST', '/swap/execute', body, key())])
    expect(answers.map((a) => a.status).sort()).toEqual([200, 422])
    expect(answers.find((a) => a.status === 422)!.body.code).toBe('insufficient_funds')
    const p = (await api('GET', `/wallet/portfolio?agentId=${racer.id}`)).body
    expect(p.holdings.find((h: { symbol: string }) => h.symbol === 'USDC').balance).toBe('40')
    const { rows } = await app.services.pool.query(`select count(*)::int as n from paper_fill where agent_id = $1`, [racer.id])
    expect(rows[0].n).toBe(1)
  })

  it("deposits are bounded per agent (1,000,000 USD in all, valued when made): past it 422 naming amount and nothing recorded, racing deposits too", async () => {
    const bounded = (await api('POST', '/agents', { name: 'bounded', mode: 'paper', skills: ['trading'] })).body as Agent
    const deposit = (amount: string, token = 'USDC') => api('POST', `/agents/${bounded.id}/paper/deposit`, { token, amount }, key())
    const recorded = async () => (await app.services.pool.query<{ n: number }>('select count(*)::int as n from paper_deposit where agent_id = $1', [bounded.id])).rows[0]!.n
    const huge = await deposit('1000000000000000000000000', 'ETH')
    expect({ status: huge.status, code: huge.body.code, fields: Object.keys(huge.body.field_errors ?? {}) }).toEqual({ status: 422, code: 'validation_failed', fields: ['amount'] })
    expect(await recorded()).toBe(0)
    // Two at once that the bound takes only one of.
    const raced = await Promise.all([deposit('600000'), deposit('600000')])
    expect(raced.map((r) => r.status).sort()).toEqual([201, 422])
    expect((await deposit('400000')).status).toBe(201)
    const over = await deposit('0.01')
    expect({ status: over.status, amount: over.body.field_errors?.amount }).toEqual({ status: 422, amount: expect.stringContaining('1000000 USD') })
    expect(await recorded()).toBe(2)
    const usdc = (await api('GET', `/wallet/portfolio?agentId=${bounded.id}`)).body.holdings.find((h: { symbol: string }) => h.symbol === 'USDC')
    expect(usdc.balance).toBe('1000000')
  })

  it('the paper leaderboard ranks by return (realised PnL over deposits), not by size', async () => {
    // small: 100 USDC, a 50 USDC round trip; large: 1,000,000 USDC, a 500 USDC round trip. The large one
    // loses more dollars (fees on ten times the size) but a far smaller share of what it holds.
    const made: Record<string, string> = {}
    for (const [name, deposit, trade] of [['small', '100', '50'], ['large', '1000000', '500']] as const) {
      const a = (await api('POST', '/agents', { name, mode: 'paper', skills: ['trading'], policy: { max_trade_usd: '5000', max_daily_usd: '100000' } })).body as Agent
      made[name] = a.id
      expect((await api('POST', `/agents/${a.id}/paper/deposit`, { token: 'USDC', amount: deposit }, key())).status).toBe(201)
      const buy = await api('POST', '/swap/execute', { agentId: a.id, tokenIn: 'USDC', tokenOut: 'ETH', amountIn: trade, slippageBps: 300 }, key())
      expect(buy.body.status, JSON.stringify(buy.body)).toBe('confirmed')
      const sell = await api('POST', '/swap/execute', { agentId: a.id, tokenIn: 'ETH', tokenOut: 'USDC', amountIn: buy.body.amountOut, slippageBps: 300 }, key())
      expect(sell.body.status, JSON.stringify(sell.body)).toBe('confirmed')
    }
    type Row = { agentId: string; realisedPnlUsd: string; returnPct: string | null; depositedUsd: string; rank: number }
    let rows: Row[] = []
    await expect.poll(async () => {
      rows = (await api('GET', '/leaderboard?sort_by=pnl&mode=paper&limit=100')).body.leaderboard
      return rows.filter((r) => r.agentId === made.small || r.agentId === made.large).length
    }, { timeout: 10_000 }).toBe(2)
    const small = rows.find((r) => r.agentId === made.small)!
    const large = rows.find((r) => r.agentId === made.large)!
    expect(cents(large.realisedPnlUsd)).toBeLessThan(cents(small.realisedPnlUsd))
    expect([small.depositedUsd, large.depositedUsd]).toEqual(['100.00', '1000000.00'])
    expect(Number(large.returnPct)).toBeGreaterThan(Number(small.returnPct))
    expect(large.rank).toBeLessThan(small.rank)
    // The whole board is in order of return (null last).
    const returns = rows.map((r) => (r.returnPct === null ? -Infinity : Number(r.returnPct)))
    expect(returns).toEqual([...returns].sort((x, y) => y - x))
  })
})

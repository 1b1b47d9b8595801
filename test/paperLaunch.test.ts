import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { getAddress, parseEther, parseUnits } from 'viem'
import { startTestApp, waitForLaunchEnd, type Api, type TestApp } from './support/app.ts'
import { paperTokenAddress } from '../src/domain/paper/paperAddress.ts'
import { LAUNCH_SUPPLY } from '../src/adapters/chain/launchTx.ts'

/**
 * Paper launches (docs/api.md, "Paper agents"): a paper agent's launch takes the same path and
 * answers the same shapes, but makes a virtual token (its address derived from the launch id, no
 * contract) and a virtual pool; a self-funded seed leaves the paper ledger. Nothing reaches the
 * chain: the wallet's nonce never moves and no transaction is recorded. A holding of the paper
 * token is valued at its pool's price; its launcher's swaps of it are filled against that pool
 * (constant product, its fee), anyone else's are refused with their own code.
 */
let app: TestApp
let api: Api
let paper: { id: string; walletAddress: `0x${string}` }
let depositUsd: number
const key = () => ({ 'idempotency-key': randomUUID() })

beforeAll(async () => {
  app = await startTestApp({}, { withChain: true })
  ;({ api } = await app.account())
  paper = (await api('POST', '/agents', { name: 'paper launcher', mode: 'paper', skills: ['token-launch'], policy: { max_trade_usd: '100000', max_daily_usd: '1000000' } })).body
  const dep = await api('POST', `/agents/${paper.id}/paper/deposit`, { token: 'ETH', amount: '2' }, key())
  expect(dep.status).toBe(201)
  depositUsd = Number(dep.body.valueUsd)
})
afterAll(async () => {
  await app?.close()
})

const nonce = (address: `0x${string}`) => app.services.chain!.publicClient.getTransactionCount({ address: getAddress(address), blockTag: 'latest' })
const q = async <T = Record<string, unknown>>(sql: string, values: unknown[]) => (await app.services.pool.query(sql, values)).rows as T[]
const holding = async (symbol: string) => (await api('GET', `/wallet/portfolio?agentId=${paper.id}`)).body.holdings.find((h: { symbol: string }) => h.symbol === symbol)

describe('paper launches', () => {
  let token: string

  it('self-funded: live with a paper token, the seed debited from the paper ledger, the virtual pool recorded, nothing sent', async () => {
    const before = await nonce(paper.walletAddress)
    // The preview meets the same rules: a paper address, no gas.
    const preview = await api('POST', '/launch/preview', { venue: 'self-funded', agentId: paper.id, symbol: 'PAPR', name: 'Paper Cat', quote: 'ETH', seedAmount: '0.5' })
    expect(preview.status, JSON.stringify(preview.body)).toBe(200)
    expect(preview.body).toMatchObject({ predictedTokenAddress: expect.stringMatching(/^0x0{16}a[0-9a-f]{23}$/), gas: { limit: '0', costEth: '0' } })
    const k = key()
    const res = await api('POST', '/launch/self-funded', { agentId: paper.id, symbol: 'PAPR', name: 'Paper Cat', quote: 'ETH', seedAmount: '0.5' }, k)
    expect(res.status, JSON.stringify(res.body)).toBe(202)
    expect(res.body).toMatchObject({ agentId: paper.id, venue: 'self-funded', symbol: 'PAPR', quote: 'ETH' })
    const live = await waitForLaunchEnd(api, res.body.id)
    token = paperTokenAddress(res.body.id)
    expect(token).toMatch(/^0x0{16}a[0-9a-f]{23}$/)
    expect(live).toMatchObject({ status: 'live', tokenAddress: token, poolAddress: null, txHash: `paper:${res.body.id}`, error: null })
    // The same request again: the same launch.
    const again = await api('POST', '/launch/self-funded', { agentId: paper.id, symbol: 'PAPR', name: 'Paper Cat', quote: 'ETH', seedAmount: '0.5' }, k)
    expect(again.body.id).toBe(res.body.id)
    expect((await api('GET', `/launch/${res.body.id}`)).body).toMatchObject({ status: 'live', tokenAddress: token })

    // The ledger: the seed left the ETH balance, one fill, one virtual pool holding the whole supply against the seed.
    expect(await q(`select token, amount::text from paper_balance where agent_id = $1 order by token`, [paper.id])).toEqual([{ token: 'eth', amount: parseEther('1.5').toString() }])
    expect(await q(`select kind, result->>'tokenAddress' as token from paper_fill where op_id = $1`, [res.body.id])).toEqual([{ kind: 'launch', token }])
    expect(await q(`select agent_id, venue, quote_symbol, quote_reserve::text, token_reserve::text, fee_bps from paper_pool where token = $1`, [token])).toEqual([
      { agent_id: paper.id, venue: 'self-funded', quote_symbol: 'ETH', quote_reserve: parseEther('0.5').toString(), token_reserve: LAUNCH_SUPPLY.toString(), fee_bps: 30 },
    ])
    // Nothing reached the chain: no transaction recorded, the nonce unchanged, no token in the chain's registry.
    expect(await q(`select 1 from chain_tx where agent_id = $1`, [paper.id])).toEqual([])
    expect(await q(`select 1 from token where address = $1`, [token])).toEqual([])
    expect(await nonce(paper.walletAddress)).toBe(before)
    expect(before).toBe(0)
    expect(await app.services.chain!.publicClient.getCode({ address: getAddress(token) })).toBeUndefined()
    // The seed left the PnL ledger as a live launch's does: locked for good, a quarter of the ETH's basis realised as the launch's cost.
    const eth = await holding('ETH')
    expect(eth.balance).toBe('1.5')
    expect(Math.abs(Number(eth.costBasisUsd) - depositUsd * 0.75)).toBeLessThanOrEqual(0.01)
  })

  it("a holding of the paper token is valued at its virtual pool's price; another agent's swap of it is refused with its own code", async () => {
    // One million tokens of the billion in a pool holding 0.5 ETH: 0.0005 ETH at the pool's price.
    const dep = await api('POST', `/agents/${paper.id}/paper/deposit`, { token, amount: '1000000' }, key())
    expect(dep.status, JSON.stringify(dep.body)).toBe(201)
    const eth = await holding('ETH')
    const ethUsd = Number(eth.valueUsd) / Number(eth.balance)
    const line = await holding('PAPR')
    expect(line).toMatchObject({ address: token, balance: '1000000', decimals: 18 })
    expect(Math.abs(Number(line.valueUsd) - 0.0005 * ethUsd)).toBeLessThanOrEqual(0.01)
    expect(Number(line.priceUsd)).toBeCloseTo((0.5 / 1e9) * ethUsd, 12)
    const portfolio = (await api('GET', `/wallet/portfolio?agentId=${paper.id}`)).body
    expect(Number(portfolio.totalValueUsd)).toBeCloseTo(Number(eth.valueUsd) + Number(line.valueUsd), 1)

    // Another agent (a paper one that did not launch it, or a live one) cannot trade it.
    const other = (await api('POST', '/agents', { name: 'other paper', mode: 'paper', skills: ['trading'] })).body
    const live = (await api('POST', '/agents', { name: 'live', skills: ['trading'] })).body
    for (const agentId of [other.id, live.id]) {
      const swap = await api('POST', '/swap/execute', { agentId, tokenIn: 'ETH', tokenOut: token, amountIn: '0.01', slippageBps: 300, acknowledgeUnverified: true }, key())
      expect(swap.status).toBe(422)
      expect(swap.body).toMatchObject({ code: 'paper_token_unsupported', field_errors: { tokenOut: expect.any(String) } })
    }
    // Only against its quote asset.
    const usdc = await api('POST', '/swap/quote', { agentId: paper.id, tokenIn: 'USDC', tokenOut: token, amountIn: '1', slippageBps: 300 })
    expect(usdc.status).toBe(422)
    expect(usdc.body.field_errors).toHaveProperty('tokenIn')
  })

  it('a swap of the paper token is filled against its virtual pool (x * y = k, the fee from the input), moving its reserves and its price', async () => {
    const reserves = async () => (await q<{ quote_reserve: string; token_reserve: string }>(`select quote_reserve::text, token_reserve::text from paper_pool where token = $1`, [token]))[0]!
    const r0 = await reserves()
    const out = (amountIn: bigint, rin: bigint, rout: bigint, fee: bigint) => (amountIn * (10_000n - fee) * rout) / (rin * 10_000n + amountIn * (10_000n - fee))
    const amountIn = parseEther('0.05')
    const expected = out(amountIn, BigInt(r0.quote_reserve), BigInt(r0.token_reserve), 30n)
    const quote = await api('POST', '/swap/quote', { agentId: paper.id, tokenIn: 'ETH', tokenOut: token, amountIn: '0.05', slippageBps: 300 })
    expect(quote.status, JSON.stringify(quote.body)).toBe(200)
    expect(parseEther(quote.body.amountOut)).toBe(expected)
    const priceBefore = Number((await holding('PAPR')).priceUsd)
    const buy = await api('POST', '/swap/execute', { agentId: paper.id, tokenIn: 'ETH', tokenOut: token, amountIn: '0.05', slippageBps: 300, acknowledgeUnverified: true }, key())
    expect(buy.body, JSON.stringify(buy.body)).toMatchObject({ status: 'confirmed', txHash: expect.stringMatching(/^paper:/), gasUsed: '0', amountOutBaseUnits: expected.toString() })
    const r1 = await reserves()
    expect(r1).toEqual({ quote_reserve: (BigInt(r0.quote_reserve) + amountIn).toString(), token_reserve: (BigInt(r0.token_reserve) - expected).toString() })
    const balances = new Map((await q<{ token: string; amount: string }>(`select token, amount::text from paper_balance where agent_id = $1`, [paper.id])).map((r) => [r.token, r.amount]))
    expect(balances.get('eth')).toBe(parseEther('1.45').toString())
    expect(balances.get(token)).toBe((parseEther('1000000') + expected).toString())
    // The buy raised the pool's price, and the portfolio values the holding at it.
    const line = await holding('PAPR')
    expect(Number(line.priceUsd)).toBeGreaterThan(priceBefore)
    const eth = await holding('ETH')
    const ethUsd = Number(eth.valueUsd) / Number(eth.balance)
    const held = parseEther('1000000') + expected
    const valueEth = Number((held * BigInt(r1.quote_reserve)) / BigInt(r1.token_reserve)) / 1e18
    expect(Math.abs(Number(line.valueUsd) - valueEth * ethUsd)).toBeLessThanOrEqual(0.01)

    // Selling back: the pool pays from its quote reserve.
    const sell = parseEther('500000')
    const back = out(sell, BigInt(r1.token_reserve), BigInt(r1.quote_reserve), 30n)
    const sold = await api('POST', '/swap/execute', { agentId: paper.id, tokenIn: token, tokenOut: 'ETH', amountIn: '500000', slippageBps: 100, acknowledgeUnverified: true }, key())
    expect(sold.body, JSON.stringify(sold.body)).toMatchObject({ status: 'confirmed', amountOutBaseUnits: back.toString() })
    expect(await reserves()).toEqual({ quote_reserve: (BigInt(r1.quote_reserve) - back).toString(), token_reserve: (BigInt(r1.token_reserve) + sell).toString() })
    expect(await q(`select 1 from chain_tx where agent_id = $1`, [paper.id])).toEqual([])
    expect(await nonce(paper.walletAddress)).toBe(0)
  })

  it('venue-b: live with no seed debited; a seed beyond the paper balance is refused before anything is recorded; fee claims stay unsupported', async () => {
    const ethBefore = (await holding('ETH')).balance
    const res = await api('POST', '/launch/venue-b', { agentId: paper.id, symbol: 'PAPB', name: 'Paper Pool', quote: 'USDC' }, key())
    expect(res.status, JSON.stringify(res.body)).toBe(202)
    const live = await waitForLaunchEnd(api, res.body.id)
    expect(live).toMatchObject({ status: 'live', tokenAddress: paperTokenAddress(res.body.id), txHash: `paper:${res.body.id}` })
    expect(await q(`select quote_symbol, quote_reserve::text, fee_bps from paper_pool where launch_id = $1`, [res.body.id])).toEqual([
      { quote_symbol: 'USDC', quote_reserve: parseUnits('15000', 6).toString(), fee_bps: 100 },
    ])
    expect((await holding('ETH')).balance).toBe(ethBefore)

    const broke = await api('POST', '/launch/self-funded', { agentId: paper.id, symbol: 'BROKE', name: 'Broke', quote: 'ETH', seedAmount: '5' }, key())
    expect(broke.status).toBe(422)
    expect(broke.body.code).toBe('insufficient_funds')
    expect(await q(`select 1 from paper_pool where symbol = 'BROKE'`, [])).toEqual([])

    const claim = await api('POST', '/fees/claim', { agentId: paper.id }, key())
    expect(claim.body.code).toBe('paper_unsupported')
    expect(await q(`select 1 from chain_tx where agent_id = $1`, [paper.id])).toEqual([])
    expect(await nonce(paper.walletAddress)).toBe(0)
  })
})

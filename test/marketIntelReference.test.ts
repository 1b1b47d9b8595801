import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { formatUnits, maxUint256, parseEther, parseUnits, type Address, type Hex, type WalletClient } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { SMA } from 'trading-signals'
import { apiClient, startTestApp, type Api, type TestApp } from './support/app.ts'
import { startModelServer, type ModelServer } from './support/modelServer.ts'
import { AmmRouterArtifact, MockUSDCArtifact } from '../src/dev/artifacts/index.ts'
import { EMBEDDED_DEPLOYER_KEY, walletClientFor, type ChainHandle } from '../src/adapters/chain/chain.ts'
import type { Indexer } from '../src/adapters/chain/indexer.ts'

/**
 * Market intelligence covers every token with a pool the service knows, not only launched ones:
 * 40 swaps of ETH into TSLAx through the router (WETH -> USDC -> TSLAx), one per chain hour, from
 * a wallet that is none of ours, give TSLAx candles (by address and by symbol, in USD as /price
 * prices it), indicators as the reference client asks for them (`mint=TSLAx`, default 1h), a
 * top-mover entry, a whale anomaly and a pool to yield; WETH, sold into USDC on each swap, gets
 * candles in USD; the intel tools answer for TSLAx in a model's chat turn and over MCP.
 */
let model: ModelServer
let app: TestApp
let pub: Api
let chain: ChainHandle
let indexer: Indexer
let trader: WalletClient
let traderAddress: Address
let tsla: Address
let weth: Address
/** Chain time (s) of the first scripted hour. */
let base: number
const HOURS = 40

async function rpc(method: string, params: unknown[] = []) {
  return chain.publicClient.request({ method: method as never, params: params as never })
}
async function mined(hash: Hex) {
  const r = await chain.publicClient.waitForTransactionReceipt({ hash, pollingInterval: 20 })
  expect(r.status).toBe('success')
  return r
}
const router = () => chain.manifest.contracts.router
const deadline = () => BigInt(base + 30 * 86_400)

beforeAll(async () => {
  model = await startModelServer()
  app = await startTestApp({ OPENAI_BASE_URL: model.baseUrl, OPENAI_API_KEY: 'test-key' }, { withChain: true })
  chain = app.services.chain!
  indexer = app.services.indexer!
  pub = apiClient(`${app.url}/api/v1`)
  tsla = chain.manifest.stocks.find((s) => s.symbol === 'TSLAx')!.address
  weth = chain.manifest.contracts.weth
  const key = generatePrivateKey()
  traderAddress = privateKeyToAccount(key).address
  trader = walletClientFor(chain, key)
  await rpc('anvil_setBalance', [traderAddress, '0x3635C9ADC5DEA00000'])
  const head = await chain.publicClient.getBlock({ blockTag: 'latest' })
  base = (Math.floor(Number(head.timestamp) / 3600) + 1) * 3600
  for (let i = 0; i < HOURS; i++) {
    await rpc('evm_setNextBlockTimestamp', [base + i * 3600 + 5])
    await mined(await trader.writeContract({
      chain: chain.chain, account: trader.account!, address: router(), abi: AmmRouterArtifact.abi, functionName: 'swapExactETHForTokens',
      args: [0n, [weth, chain.manifest.contracts.usdc, tsla], traderAddress, deadline()], value: parseEther(String(0.1 + (i % 5) * 0.05)),
    }))
  }
  await indexer.syncOnce()
}, 120_000)
afterAll(async () => {
  await app?.close()
  await model?.stop()
})

/** A token's indexed trades, oldest first. */
async function trades(token: Address) {
  const { rows } = await app.services.pool.query<{ quote_amount: string; side: string; quote_usd: string; tx_hash: string }>(
    `select quote_amount::text, side, quote_usd::text, tx_hash from trade where token_address = $1 order by block_number, log_index`, [token.toLowerCase()])
  return rows
}

describe('candles of tokens with a known pool', () => {
  it('TSLAx: one 1h candle per swap in USDC and USD, by address or by symbol in any case; the last close is /price\'s', async () => {
    const q = `interval=1h&from=${base}&to=${base + HOURS * 3600}`
    const res = await pub('GET', `/tokens/${tsla}/candles?${q}`)
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body).toMatchObject({ address: tsla.toLowerCase(), symbol: 'TSLAx', quote: 'USDC', interval: '1h' })
    const candles = res.body.candles as Array<{ trades: number; close: number; closeUsd: number; volumeQuote: number; volumeUsd: number }>
    expect(candles).toHaveLength(HOURS)
    const rows = await trades(tsla)
    expect(rows).toHaveLength(HOURS)
    expect(rows.every((r) => r.side === 'buy' && r.quote_usd === (10n ** 18n).toString())).toBe(true)
    expect(candles.every((c, i) => c.trades === 1 && c.closeUsd === c.close && c.volumeUsd === Number(formatUnits(BigInt(rows[i]!.quote_amount), 6)))).toBe(true)
    expect(candles.at(-1)!.close).toBeGreaterThan(candles[0]!.close)
    const price = await pub('GET', '/price?mint=TSLAx')
    expect(candles.at(-1)!.closeUsd).toBe(price.body.price)
    const bySymbol = await pub('GET', `/tokens/tslax/candles?${q}`)
    expect(bySymbol.status).toBe(200)
    expect(bySymbol.body.candles).toEqual(res.body.candles)
  })

  it('WETH: every swap sold WETH into USDC, so its candles fall, in USD; the last close is ETH\'s price on /price', async () => {
    const q = `interval=1h&from=${base}&to=${base + HOURS * 3600}`
    const res = await pub('GET', `/tokens/${weth}/candles?${q}`)
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body).toMatchObject({ address: weth.toLowerCase(), symbol: 'WETH', quote: 'USDC' })
    const candles = res.body.candles as Array<{ trades: number; closeUsd: number; volume: number }>
    expect(candles).toHaveLength(HOURS)
    expect(candles.every((c, i) => c.trades === 1 && (i === 0 || c.closeUsd < candles[i - 1]!.closeUsd))).toBe(true)
    expect((await trades(weth)).every((r) => r.side === 'sell')).toBe(true)
    expect(candles[0]!.closeUsd).toBeLessThan(3000)
    expect(candles[0]!.closeUsd).toBeGreaterThan(2900)
    expect(candles.at(-1)!.closeUsd).toBe((await pub('GET', '/price?mint=ETH')).body.price)
    expect((await pub('GET', `/tokens/eth/candles?${q}`)).body.candles).toEqual(candles)
  })

  it('unknown tokens keep the contract\'s errors: 404 not_found for candles, 422 on mint for indicators (USDC says why)', async () => {
    const unknown = await pub('GET', `/tokens/0x${'1'.repeat(40)}/candles`)
    expect(unknown.status).toBe(404)
    expect(unknown.body).toMatchObject({ error: 'Token not found.', code: 'not_found' })
    expect((await pub('GET', '/tokens/DOGE/candles')).status).toBe(404)
    const doge = await pub('GET', '/indicators?mint=DOGE')
    expect(doge.status).toBe(422)
    expect(doge.body.field_errors.mint).toMatch(/known pool/)
    const usdc = await pub('GET', '/indicators?mint=usdc')
    expect(usdc.status).toBe(422)
    expect(usdc.body.field_errors.mint).toMatch(/USDC is the quote asset/)
  })
})

describe('indicators, movers, anomalies and yield', () => {
  it('GET /indicators?mint=TSLAx (the reference client\'s getIndicators): all four on the 40 hourly USD closes; by address alike', async () => {
    const res = await pub('GET', '/indicators?mint=TSLAx')
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body).toMatchObject({ mint: 'TSLAx', address: tsla.toLowerCase(), symbol: 'TSLAx', timeframe: '1h', basis: 'usd', candles: HOURS })
    expect(res.body.indicators.map((i: { indicator: string }) => i.indicator)).toEqual(['rsi', 'ema', 'sma', 'macd'])
    const closes = (await pub('GET', `/tokens/${tsla}/candles?interval=1h&from=${base}&to=${base + HOURS * 3600}`)).body.candles.map((c: { closeUsd: number }) => c.closeUsd)
    const sma = new SMA(20)
    sma.updates(closes, false)
    expect(res.body.indicators[2].value).toBeCloseTo(sma.getResultOrThrow(), 9)
    const byAddress = await pub('GET', `/indicators?mint=${tsla}`)
    expect(byAddress.body.indicators).toEqual(res.body.indicators)
  })

  it('top movers: TSLAx a gainer and WETH a loser since their seeded prices, in USD as /price has them', async () => {
    const gainers = await pub('GET', '/signals/top-movers?timeframe=24h&sort_by=gainers&limit=100')
    expect(gainers.status).toBe(200)
    const t = gainers.body.movers.find((m: { mint: string }) => m.mint === tsla.toLowerCase())
    const volume = (await trades(tsla)).reduce((s, r) => s + BigInt(r.quote_amount), 0n)
    expect(t).toEqual({
      mint: tsla.toLowerCase(), symbol: 'TSLAx', name: 'Tesla xStock', price: (await pub('GET', '/price?mint=TSLAx')).body.price,
      change: expect.any(Number), volume: Number(formatUnits(volume, 6)), marketCap: null, liquidity: expect.any(Number),
    })
    expect(t.change).toBeGreaterThan(0)
    expect(t.price / 350 - 1).toBeCloseTo(t.change, 5)
    const losers = await pub('GET', '/signals/top-movers?timeframe=24h&sort_by=losers&limit=100')
    const w = losers.body.movers.find((m: { mint: string }) => m.mint === weth.toLowerCase())
    expect(w).toMatchObject({ symbol: 'WETH', price: (await pub('GET', '/price?mint=ETH')).body.price, marketCap: null })
    expect(w.change).toBeLessThan(0)
  })

  it('a 15,000 USDC swap into TSLAx is a whale movement naming TSLAx within one block', async () => {
    const deployer = walletClientFor(chain, EMBEDDED_DEPLOYER_KEY)
    const usdc = chain.manifest.contracts.usdc
    await mined(await deployer.writeContract({ address: usdc, abi: MockUSDCArtifact.abi, functionName: 'mint', args: [traderAddress, parseUnits('15000', 6)] }))
    await mined(await trader.writeContract({ chain: chain.chain, account: trader.account!, address: usdc, abi: MockUSDCArtifact.abi, functionName: 'approve', args: [router(), maxUint256] }))
    const whale = await mined(await trader.writeContract({
      chain: chain.chain, account: trader.account!, address: router(), abi: AmmRouterArtifact.abi, functionName: 'swapExactTokensForTokens',
      args: [parseUnits('15000', 6), 0n, [usdc, tsla], traderAddress, deadline()],
    }))
    await indexer.syncOnce()
    const res = await pub('GET', '/signals/anomalies?timeframe=7d&types=whale_movement&limit=100')
    expect(res.status).toBe(200)
    const a = res.body.anomalies.find((x: any) => x.details.txHash === whale.transactionHash)
    expect(a).toMatchObject({
      type: 'whale_movement', mints: [tsla.toLowerCase()], description: 'A buy of TSLAx worth $15000.00 in one swap',
      details: { valueUsd: 15000, side: 'buy', trader: traderAddress.toLowerCase(), blockNumber: Number(whale.blockNumber) },
    })
  })

  it('yield: the TSLAx/USDC and WETH/USDC pools, with APY from their 24 h fees over TVL', async () => {
    const res = await pub('GET', '/signals/yield?limit=100')
    expect(res.status).toBe(200)
    const t = res.body.opportunities.find((o: { mint: string }) => o.mint === tsla.toLowerCase())
    const pair = chain.manifest.stocks.find((s) => s.symbol === 'TSLAx')!.pair.toLowerCase()
    expect(t).toMatchObject({ protocol: 'launchpad-amm', pool: pair, tokens: ['TSLAx', 'USDC'], type: 'liquidity_pool', risk: 'low' })
    expect(t.apy).toBeGreaterThan(0)
    expect(t.tvl).toBeGreaterThan(700_000)
    const w = res.body.opportunities.find((o: { mint: string }) => o.mint === weth.toLowerCase())
    expect(w).toMatchObject({ pool: chain.manifest.contracts.wethUsdcPair.toLowerCase(), tokens: ['WETH', 'USDC'] })
  })
})

describe('the market-intelligence tools', () => {
  it('a model in a chat turn calls get_indicators for TSLAx and reads the values', async () => {
    const { api } = await app.account({ name: 'chat' })
    const analyst = (await api('POST', '/agents', { name: 'analyst', skills: ['market-intelligence'] })).body.id
    model.mock.on({ userMessage: 'how is TSLAx trending', hasToolResult: false }, { toolCalls: [{ id: 'call_tsla', name: 'get_indicators', arguments: JSON.stringify({ mint: 'TSLAx', indicators: ['rsi', 'sma'] }) }] })
    model.mock.onToolResult('call_tsla', { content: 'TSLAx is rising.' })
    const res = await api('POST', `/agents/${analyst}/chat`, { message: 'how is TSLAx trending' })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    const [call] = res.body.toolCalls
    const route = await pub('GET', '/indicators?mint=TSLAx&indicators=rsi,sma')
    expect(call).toMatchObject({ name: 'get_indicators', status: 'ok', result: { address: tsla.toLowerCase(), symbol: 'TSLAx', indicators: route.body.indicators } })
    const toolMessage = (model.mock.getRequests()[1]!.body as { messages: Array<{ role: string; content: string }> }).messages.find((m) => m.role === 'tool')
    expect(toolMessage?.content).toContain(String(route.body.indicators[1].value))
  })

  it('over MCP: get_indicators, get_candles and get_market_signals answer for TSLAx by symbol', async () => {
    const { api, apiKey } = await app.account({ name: 'tools' })
    const analyst = (await api('POST', '/agents', { name: 'analyst', skills: ['market-intelligence'] })).body.id
    const client = new Client({ name: 'intel-reference-test', version: '1.0.0' })
    await client.connect(new StreamableHTTPClientTransport(new URL(`${app.url}/api/mcp`), { requestInit: { headers: { authorization: `Bearer ${apiKey}` } } }))
    try {
      const ind = (await client.callTool({ name: 'get_indicators', arguments: { agent_id: analyst, mint: 'TSLAx', indicators: ['sma'], period: 5 } })) as any
      expect(ind.isError, JSON.stringify(ind.content)).toBeFalsy()
      const route = await pub('GET', '/indicators?mint=TSLAx&indicators=sma&period=5')
      expect(ind.structuredContent).toMatchObject({ address: tsla.toLowerCase(), symbol: 'TSLAx', basis: 'usd', indicators: route.body.indicators })
      const candles = (await client.callTool({ name: 'get_candles', arguments: { agent_id: analyst, address: 'tslax', interval: '1h', limit: 3 } })) as any
      expect(candles.isError, JSON.stringify(candles.content)).toBeFalsy()
      expect(candles.structuredContent).toMatchObject({ address: tsla.toLowerCase(), symbol: 'TSLAx', quote: 'USDC' })
      expect(candles.structuredContent.candles).toHaveLength(3)
      const movers = (await client.callTool({ name: 'get_market_signals', arguments: { agent_id: analyst, signal: 'top_movers', sort_by: 'volume', limit: 100 } })) as any
      expect(movers.structuredContent.movers.map((m: { symbol: string }) => m.symbol)).toContain('TSLAx')
    } finally {
      await client.close()
    }
  })
})

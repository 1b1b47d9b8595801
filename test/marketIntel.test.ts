import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { formatUnits, maxUint256, parseUnits, type Address, type Hex, type WalletClient } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { EMA, MACD, RSI, SMA } from 'trading-signals'
import { apiClient, startTestApp, waitForLaunchEnd, type Api, type TestApp } from './support/app.ts'
import { AmmRouterArtifact, LaunchTokenArtifact, MockUSDCArtifact } from '../src/dev/artifacts/index.ts'
import { EMBEDDED_DEPLOYER_KEY, walletClientFor, type ChainHandle } from '../src/adapters/chain/chain.ts'
import type { Indexer } from '../src/adapters/chain/indexer.ts'

/**
 * Market intelligence from the indexer: scripted swaps on a venue-b USDC pool, one per minute of
 * chain time (block timestamps set), produce the candles, the indicators (checked against the
 * library on the same closes), a top mover and anomalies; a reorg removes a swap's candle
 * contribution and its anomaly.
 */
let app: TestApp
let api: Api
let pub: Api
let chain: ChainHandle
let indexer: Indexer
let outsider: WalletClient
let outsiderAddress: Address
let token: Address
/** Chain time (s) of the first scripted minute. */
let base: number
const MINUTES = 40
const SKIPPED = 20
const farDeadline = () => BigInt(base + 30 * 86_400)

async function rpc(method: string, params: unknown[] = []) {
  return chain.publicClient.request({ method: method as never, params: params as never })
}
async function mined(hash: Hex) {
  const r = await chain.publicClient.waitForTransactionReceipt({ hash, pollingInterval: 20 })
  expect(r.status).toBe('success')
  return r
}
async function swap(amountIn: bigint, path: Address[], at?: number) {
  if (at !== undefined) await rpc('evm_setNextBlockTimestamp', [at])
  return mined(await outsider.writeContract({
    chain: chain.chain, account: outsider.account!, address: chain.manifest.contracts.router, abi: AmmRouterArtifact.abi,
    functionName: 'swapExactTokensForTokens', args: [amountIn, 0n, path, outsiderAddress, farDeadline()],
  }))
}
const usdc = () => chain.manifest.contracts.usdc
const buy = (usd: string, at?: number) => swap(parseUnits(usd, 6), [usdc(), token], at)
const tokenBalance = (who: Address) => chain.publicClient.readContract({ address: token, abi: LaunchTokenArtifact.abi, functionName: 'balanceOf', args: [who] })
const sell = async (amount: bigint, at?: number) => swap(amount, [token, usdc()], at)

beforeAll(async () => {
  app = await startTestApp({}, { withChain: true })
  chain = app.services.chain!
  indexer = app.services.indexer!
  api = (await app.account()).api
  pub = apiClient(`${app.url}/api/v1`)
  const a = await api('POST', '/agents', { name: 'intel', model: 'gpt-4o-mini', skills: ['token-launch'] })
  expect((await api('POST', '/dev/faucet', { agentId: a.body.id, eth: '5', usdc: '1000' })).status).toBe(200)
  const res = await api('POST', '/launch/venue-b', { agentId: a.body.id, symbol: 'MOVE', name: 'Mover', quote: 'USDC' }, { 'idempotency-key': 'intel-launch' })
  expect(res.status).toBe(202)
  const live = await waitForLaunchEnd(api, res.body.id)
  expect(live.status).toBe('live')
  token = live.tokenAddress

  const key = generatePrivateKey()
  outsiderAddress = privateKeyToAccount(key).address
  outsider = walletClientFor(chain, key)
  await rpc('anvil_setBalance', [outsiderAddress, '0x3635C9ADC5DEA00000'])
  const deployer = walletClientFor(chain, EMBEDDED_DEPLOYER_KEY)
  await mined(await deployer.writeContract({ address: usdc(), abi: MockUSDCArtifact.abi, functionName: 'mint', args: [outsiderAddress, parseUnits('100000', 6)] }))
  const router = chain.manifest.contracts.router
  await mined(await outsider.writeContract({ chain: chain.chain, account: outsider.account!, address: usdc(), abi: MockUSDCArtifact.abi, functionName: 'approve', args: [router, maxUint256] }))
  await mined(await outsider.writeContract({ chain: chain.chain, account: outsider.account!, address: token, abi: LaunchTokenArtifact.abi, functionName: 'approve', args: [router, maxUint256] }))

  // One swap per chain minute (none in minute SKIPPED): mostly buys, every third a sale.
  const head = await chain.publicClient.getBlock({ blockTag: 'latest' })
  base = (Math.floor(Number(head.timestamp) / 300) + 1) * 300
  for (let i = 0; i < MINUTES; i++) {
    if (i === SKIPPED) continue
    const at = base + i * 60 + 5
    if (i % 3 === 2) await sell((await tokenBalance(outsiderAddress)) / 4n, at)
    else await buy(String(10 + (i % 7) * 5), at)
  }
  await indexer.syncOnce()
}, 120_000)
afterAll(async () => {
  await app?.close()
})

/** The token's indexed trades, oldest first. */
async function trades() {
  const { rows } = await app.services.pool.query<{ price_after: string; quote_amount: string; token_amount: string; at: Date; quote_usd: string }>(
    `select price_after::text, quote_amount::text, token_amount::text, at, quote_usd::text from trade where token_address = $1 order by block_number, log_index`, [token.toLowerCase()])
  return rows
}
const quotePrice = (p: string) => Number(formatUnits(BigInt(p), 24))

describe('candles', () => {
  it('1m candles: one per minute, each from its swap, the skipped minute filled flat at the previous close', async () => {
    const res = await pub('GET', `/tokens/${token}/candles?interval=1m&from=${base}&to=${base + MINUTES * 60}`)
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ address: token.toLowerCase(), symbol: 'MOVE', quote: 'USDC', interval: '1m', from: new Date(base * 1000).toISOString() })
    const candles = res.body.candles
    expect(candles).toHaveLength(MINUTES)
    const rows = await trades()
    expect(rows).toHaveLength(MINUTES - 1)
    expect(rows.every((r) => r.quote_usd === (10n ** 18n).toString())).toBe(true)
    const first = candles[0]
    expect(first).toMatchObject({ time: new Date(base * 1000).toISOString(), timestamp: base, trades: 1, volumeQuote: 10, volumeUsd: 10 })
    expect(first.close).toBe(quotePrice(rows[0]!.price_after))
    expect(first.closeUsd).toBe(first.close)
    const gap = candles[SKIPPED]
    const before = candles[SKIPPED - 1]
    expect(gap).toMatchObject({ trades: 0, volume: 0, volumeQuote: 0, open: before.close, high: before.close, low: before.close, close: before.close })
    expect(candles[MINUTES - 1].close).toBe(quotePrice(rows.at(-1)!.price_after))
  })

  it('5m candles aggregate the minutes: open of the first, close of the last, high and low, volume summed', async () => {
    const [m1, m5] = await Promise.all([
      pub('GET', `/tokens/${token}/candles?interval=1m&from=${base}&to=${base + 300}`),
      pub('GET', `/tokens/${token}/candles?interval=5m&from=${base}&to=${base + 300}`),
    ])
    expect(m5.body.candles).toHaveLength(1)
    const c = m5.body.candles[0]
    const ones = m1.body.candles as Array<{ open: number; close: number; high: number; low: number; volumeQuote: number; trades: number }>
    expect(c.open).toBe(ones[0]!.open)
    expect(c.close).toBe(ones.at(-1)!.close)
    expect(c.high).toBe(Math.max(...ones.map((x) => x.high)))
    expect(c.low).toBe(Math.min(...ones.map((x) => x.low)))
    expect(c.trades).toBe(5)
    expect(c.volumeQuote).toBeCloseTo(ones.reduce((s, x) => s + x.volumeQuote, 0), 6)
  })

  it('bad queries are 422 naming the field; an unknown token is 404', async () => {
    const bad = await pub('GET', `/tokens/${token}/candles?interval=2m&from=yesterday`)
    expect(bad.status).toBe(422)
    expect(Object.keys(bad.body.field_errors).sort()).toEqual(['from', 'interval'])
    const many = await pub('GET', `/tokens/${token}/candles?interval=1m&from=0&to=${base}`)
    expect(many.status).toBe(422)
    expect(many.body.field_errors).toHaveProperty('from')
    expect((await pub('GET', `/tokens/0x${'1'.repeat(40)}/candles`)).status).toBe(404)
  })
})

describe('indicators', () => {
  it('RSI, EMA, SMA and MACD equal the library on the same closes', async () => {
    const last = new Date((await trades()).at(-1)!.at)
    const c = await pub('GET', `/tokens/${token}/candles?interval=1m&from=${base}&to=${Math.floor(last.getTime() / 1000) + 1}`)
    const closes = (c.body.candles as Array<{ closeUsd: number }>).map((x) => x.closeUsd)
    expect(closes).toHaveLength(MINUTES)
    const res = await pub('GET', `/indicators?mint=${token}&indicators=rsi,ema,sma,macd&timeframe=1m`)
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ mint: token, timeframe: '1m', basis: 'usd', candles: MINUTES, meta: { requestId: expect.any(String) } })
    const [rsi, ema, sma, macd] = res.body.indicators
    const close = (a: number, b: number) => expect(Math.abs(a - b)).toBeLessThanOrEqual(1e-9 * Math.abs(b) + 1e-15)
    const r = new RSI(14)
    r.updates(closes, false)
    expect(rsi).toMatchObject({ indicator: 'rsi', period: 14, signal: expect.stringMatching(/^(overbought|oversold|neutral)$/) })
    close(rsi.value, r.getResultOrThrow())
    const e = new EMA(20)
    e.updates(closes, false)
    expect(ema).toMatchObject({ indicator: 'ema', period: 20 })
    close(ema.value, e.getResultOrThrow())
    const s = new SMA(20)
    s.updates(closes, false)
    close(sma.value, s.getResultOrThrow())
    const m = new MACD(new EMA(12), new EMA(26), new EMA(9))
    m.updates(closes, false)
    const mr = m.getResultOrThrow()
    expect(macd).toMatchObject({ indicator: 'macd', trend: mr.histogram > 0 ? 'bullish' : 'bearish' })
    close(macd.macd, mr.macd)
    close(macd.signal, mr.signal)
    close(macd.histogram, mr.histogram)
  })

  it('a verified symbol names the token; period applies to rsi, ema and sma', async () => {
    const ops = (await app.account({ operator: true })).api
    expect((await ops('POST', `/ops/tokens/${token}/verified`, { verified: true })).status).toBe(200)
    const res = await pub('GET', '/indicators?mint=move&indicators=sma&timeframe=1m&period=5')
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ mint: 'move', address: token.toLowerCase(), indicators: [{ indicator: 'sma', period: 5 }] })
  })

  it('too few candles is a 422 naming indicators; an unknown mint a 422 naming mint', async () => {
    const few = await pub('GET', `/indicators?mint=${token}&indicators=macd&timeframe=1d`)
    expect(few.status).toBe(422)
    expect(few.body.error ?? few.body.code).toBeDefined()
    expect(few.body.field_errors.indicators).toMatch(/macd needs at least 34 candles of 1d/)
    const unknown = await pub('GET', '/indicators?mint=NOPE')
    expect(unknown.status).toBe(422)
    expect(unknown.body.field_errors).toHaveProperty('mint')
    const bad = await pub('GET', `/indicators?mint=${token}&indicators=rsi,vwap`)
    expect(bad.body.field_errors.indicators).toMatch(/vwap/)
  })
})

describe('signals', () => {
  it('top movers: the scripted token with its change since its first price, volume and liquidity in USD', async () => {
    const res = await pub('GET', '/signals/top-movers?timeframe=24h&sort_by=gainers&limit=5')
    expect(res.status).toBe(200)
    expect(res.body.timeframe).toBe('24h')
    const mover = res.body.movers.find((m: { mint: string }) => m.mint === token.toLowerCase())
    const { rows: snaps } = await app.services.pool.query<{ price: string; quote_reserve: string }>(
      `select price::text, quote_reserve::text from token_snapshot where token_address = $1 order by block_number, log_index`, [token.toLowerCase()])
    const first = BigInt(snaps[0]!.price)
    const lastSnap = snaps.at(-1)!
    const volume = (await trades()).reduce((s, t) => s + BigInt(t.quote_amount), 0n)
    expect(mover).toEqual({
      mint: token.toLowerCase(), symbol: 'MOVE', name: 'Mover',
      // USD per whole token in usd18 (USDC at $1), as the API truncates it.
      price: Number(formatUnits(BigInt(lastSnap.price) / 10n ** 6n, 18)),
      change: Number(((BigInt(lastSnap.price) - first) * 1_000_000n) / first) / 1_000_000,
      volume: Number(formatUnits(volume, 6)),
      marketCap: expect.any(Number),
      liquidity: Number(formatUnits(2n * BigInt(lastSnap.quote_reserve), 6)),
    })
    expect(mover.change).toBeGreaterThan(0)
    const byVolume = await pub('GET', '/signals/top-movers?sort_by=volume&min_liquidity=1000000000')
    expect(byVolume.body.movers).toEqual([])
    const bad = await pub('GET', '/signals/top-movers?timeframe=2h&sort_by=best&limit=0')
    expect(Object.keys(bad.body.field_errors).sort()).toEqual(['limit', 'sort_by', 'timeframe'])
  })

  it('a whale swap is an anomaly within one block; a reorg that drops it removes it and its candle contribution', async () => {
    const at = base + 45 * 60 + 5
    const whale = await buy('15000', at)
    await indexer.syncOnce()
    const found = await pub('GET', '/signals/anomalies?timeframe=24h&types=whale_movement,liquidity_spike')
    expect(found.status).toBe(200)
    const w = found.body.anomalies.find((x: any) => x.type === 'whale_movement' && x.details.txHash === whale.transactionHash)
    expect(w).toMatchObject({ mints: [token.toLowerCase()], severity: expect.any(Number), details: { valueUsd: 15000, side: 'buy', blockNumber: Number(whale.blockNumber) } })
    expect(w.severity).toBeGreaterThanOrEqual(0.5)
    expect(new Date(w.detectedAt).getTime()).toBe(at * 1000)
    expect(found.body.anomalies.some((x: any) => x.type === 'liquidity_spike' && x.details.blockNumber === Number(whale.blockNumber))).toBe(true)
    const minute = `/tokens/${token}/candles?interval=1m&from=${base + 45 * 60}&to=${base + 46 * 60}`
    expect((await pub('GET', minute)).body.candles[0]).toMatchObject({ trades: 1, volumeUsd: 15000 })

    await rpc('anvil_reorg', [1, []])
    expect(await chain.publicClient.getTransactionReceipt({ hash: whale.transactionHash }).catch(() => null)).toBeNull()
    await indexer.syncOnce()
    const after = await pub('GET', '/signals/anomalies?timeframe=24h')
    expect(after.body.anomalies.filter((x: any) => x.details.blockNumber === Number(whale.blockNumber))).toEqual([])
    expect((await pub('GET', minute)).body.candles[0]).toMatchObject({ trades: 0, volumeQuote: 0 })
  })

  it('a sale that pulls most of the pool\'s liquidity is a liquidity_spike within one block', async () => {
    await buy('20000')
    const pull = await sell(await tokenBalance(outsiderAddress))
    await indexer.syncOnce()
    const res = await pub('GET', '/signals/anomalies?types=liquidity_spike&limit=5')
    const spike = res.body.anomalies.find((x: any) => x.details.blockNumber === Number(pull.blockNumber))
    expect(spike).toMatchObject({ type: 'liquidity_spike', mints: [token.toLowerCase()], description: expect.stringMatching(/MOVE pool liquidity fell/) })
    expect(spike.details.changePct).toBeLessThan(-25)
    expect(res.body.anomalies.every((x: any) => x.type === 'liquidity_spike')).toBe(true)
  })

  it('yield: the pool with APY from its 24 h LP fees over TVL and a risk', async () => {
    const res = await pub('GET', '/signals/yield?limit=50')
    expect(res.status).toBe(200)
    const o = res.body.opportunities.find((x: any) => x.mint === token.toLowerCase())
    expect(o).toMatchObject({ protocol: 'launchpad-amm', pool: expect.stringMatching(/^0x[0-9a-f]{40}$/), tokens: ['MOVE', 'USDC'], type: 'liquidity_pool', risk: expect.stringMatching(/^(low|medium|high)$/) })
    expect(o.apy).toBeGreaterThan(0)
    expect(o.tvl).toBeGreaterThan(0)
    expect((await pub('GET', '/signals/yield?protocol=uniswap')).body.opportunities).toEqual([])
    expect((await pub('GET', '/signals/yield?min_apy=abc')).status).toBe(422)
  })

  it('macro: stablecoin flow, ETH dominance, breadth and fear/greed from the index; include filters', async () => {
    const res = await pub('GET', '/signals/macro')
    expect(res.status).toBe(200)
    const by = Object.fromEntries(res.body.signals.map((s: any) => [s.signal, s]))
    const { rows: [flow] } = await app.services.pool.query(
      `select coalesce(sum(quote_amount) filter (where side = 'buy'), 0) - coalesce(sum(quote_amount) filter (where side = 'sell'), 0) as net from trade where token_address = $1`, [token.toLowerCase()])
    const net = Number(formatUnits(BigInt(flow.net), 6))
    expect(by.usdc_net_flow_24h).toMatchObject({ category: 'stablecoins', value: Math.round(net * 1e6) / 1e6, sentiment: net > 0 ? 'bullish' : 'bearish', updatedAt: expect.any(String) })
    expect(by.eth_volume_dominance).toMatchObject({ category: 'dominance', value: 0 })
    expect(by.fear_greed_index.value).toBeGreaterThanOrEqual(0)
    expect(by.fear_greed_index.value).toBeLessThanOrEqual(100)
    const only = await pub('GET', '/signals/macro?include=sentiment')
    expect(only.body.signals.map((s: any) => s.category)).toEqual(['sentiment'])
    expect((await pub('GET', '/signals/macro?include=weather')).status).toBe(422)
  })
})

describe('restarts', () => {
  it('indexing everything again (a checkpoint lost in a restart) writes the same trades, candles and anomalies', async () => {
    const range = `/tokens/${token}/candles?interval=1m&from=${base}&to=${base + 50 * 60}`
    const count = async (table: string) => (await app.services.pool.query(`select count(*)::int as n from ${table}`)).rows[0].n as number
    const before = { candles: (await pub('GET', range)).body.candles, anomalies: (await pub('GET', '/signals/anomalies?timeframe=7d&limit=100')).body.anomalies, trades: await count('trade'), rows: await count('market_anomaly') }
    expect(before.rows).toBeGreaterThan(0)
    await app.services.pool.query(`update chain_checkpoint set block_number = $1`, [chain.manifest.startBlock - 1])
    await app.services.pool.query(`delete from chain_block`)
    await indexer.syncOnce()
    const { rows: [cp] } = await app.services.pool.query(`select block_number from chain_checkpoint`)
    expect(Number(cp.block_number)).toBe(Number(await chain.publicClient.getBlockNumber({ cacheTime: 0 })))
    expect(await count('trade')).toBe(before.trades)
    expect(await count('market_anomaly')).toBe(before.rows)
    expect((await pub('GET', range)).body.candles).toEqual(before.candles)
    expect((await pub('GET', '/signals/anomalies?timeframe=7d&limit=100')).body.anomalies).toEqual(before.anomalies)
  })
})

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createWalletClient, http, parseEther, type Address } from 'viem'
import { apiClient, startTestApp, type Api, type TestApp } from './support/app.ts'
import { BondingCurveLaunchpadArtifact } from '../src/dev/artifacts/index.ts'

let app: TestApp
let api: Api
/** No credentials: market data is public. */
let pub: Api
let m: NonNullable<TestApp['services']['chain']>['manifest']
let first: { id: string; walletAddress: Address }
let second: { id: string }
let curveToken: Address

const key = () => `k-${Math.random().toString(36).slice(2)}`

async function launch(agentId: string, venue: string, symbol: string): Promise<Address> {
  const res = await api('POST', `/launch/${venue}`, { agentId, symbol, name: symbol, quote: 'ETH' }, { 'idempotency-key': key() })
  expect(res.status).toBe(202)
  const until = Date.now() + 20_000
  for (;;) {
    const r = await api('GET', `/launch/${res.body.id}`)
    if (r.body.status === 'live') return r.body.tokenAddress as Address
    if (r.body.status === 'failed' || Date.now() > until) throw new Error(`launch ${res.body.id}: ${r.body.status}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

async function agent(name: string) {
  const a = await api('POST', '/agents', { name, model: 'gpt-4o-mini', skills: ['token-launch'] })
  expect(a.status).toBe(201)
  expect((await api('POST', '/dev/faucet', { agentId: a.body.id, eth: '5' })).status).toBe(200)
  return a.body
}

beforeAll(async () => {
  app = await startTestApp({}, { withChain: true })
  m = app.services.chain!.manifest
  api = (await app.account()).api
  pub = apiClient(`${app.url}/api/v1`)
  first = await agent('alpha')
  second = await agent('beta')
  curveToken = await launch(first.id, 'venue-a', 'MKTA')
})
afterAll(async () => {
  await app?.close()
})

describe('GET /price', () => {
  it('quote assets, stocks and a launched token, each with its source and block', async () => {
    const res = await pub('GET', `/price?tokens=ETH,USDC,TSLAx,${m.stocks[1]!.address},${curveToken}`)
    expect(res.status).toBe(200)
    const block = Number(await app.services.chain!.publicClient.getBlockNumber({ cacheTime: 0 }))
    expect(res.body.block).toBe(block)
    const [eth, usdc, tsla, nvda, token] = res.body.prices
    expect(eth).toEqual({
      token: 'ETH', mint: m.contracts.weth.toLowerCase(), symbol: 'ETH', name: 'Ether', address: m.contracts.weth.toLowerCase(), kind: 'quote',
      price: 3000, priceUsd: '3000', currency: 'usd', change24h: null, volume24h: null, volume24hUsd: null, marketCap: null, marketCapUsd: null,
      source: m.contracts.wethUsdcPair.toLowerCase(), sourceType: 'pool', block,
    })
    expect(usdc).toMatchObject({ symbol: 'USDC', priceUsd: '1', source: null, sourceType: 'peg' })
    expect(tsla).toMatchObject({ symbol: 'TSLAx', priceUsd: '350', source: m.stocks[0]!.pair.toLowerCase(), sourceType: 'pool', kind: 'stock' })
    expect(nvda).toMatchObject({ token: m.stocks[1]!.address, symbol: 'NVDAx', priceUsd: '180' })
    // 1.5 ETH virtual reserve over 1e9 tokens at $3,000 per ETH.
    expect(token).toMatchObject({
      token: curveToken, symbol: 'MKTA', address: curveToken.toLowerCase(), kind: 'launched', venue: 'venue-a', quote: 'ETH', phase: 'curve',
      priceUsd: '0.0000045', source: m.contracts.venueA.toLowerCase(), sourceType: 'curve', block,
    })
  })

  it('the one-token mint= form answers at the top level too; repeated names once', async () => {
    const res = await pub('GET', '/price?mint=weth')
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ token: 'weth', symbol: 'ETH', priceUsd: '3000', sourceType: 'pool', prices: [{ symbol: 'ETH' }] })
    expect(res.body.block).toBeGreaterThan(0)
    const dup = await pub('GET', '/price?tokens=usdc,USDC,%20aaplx%20')
    expect(dup.body.prices.map((p: any) => [p.symbol, p.priceUsd])).toEqual([['USDC', '1'], ['AAPLx', '230']])
  })

  it('unknown or missing tokens are 422 naming field tokens', async () => {
    const unknown = await pub('GET', `/price?tokens=ETH,DOGE,0x${'12'.repeat(20)}`)
    expect(unknown.status).toBe(422)
    expect(unknown.body.code).toBe('validation_failed')
    expect(unknown.body.field_errors.tokens).toMatch(/DOGE/)
    expect(unknown.body.field_errors.tokens).toMatch(/0x1212/)
    const mint = await pub('GET', '/price?mint=nope')
    expect(mint.status).toBe(422)
    expect(mint.body.field_errors).toHaveProperty('tokens')
    expect((await pub('GET', '/price')).body.field_errors).toHaveProperty('tokens')
    expect((await pub('GET', `/price?tokens=${Array.from({ length: 51 }, (_, i) => `T${i}`).join(',')}`)).status).toBe(422)
  })
})

describe('GET /stock-tokens', () => {
  it('lists the tokenized stocks with price and logo', async () => {
    const res = await pub('GET', '/stock-tokens')
    expect(res.status).toBe(200)
    expect(res.body.stocks.map((s: any) => [s.symbol, s.priceUsd, s.seedPriceUsd])).toEqual([
      ['TSLAx', '350', '350'], ['NVDAx', '180', '180'], ['AAPLx', '230', '230'],
    ])
    for (const s of res.body.stocks) {
      expect(s).toMatchObject({ decimals: 18, sourceType: 'pool', block: res.body.block })
      expect(s.logoUrl).toMatch(/^(https?:|data:image\/)/)
      expect(s.address).toMatch(/^0x[0-9a-f]{40}$/)
      expect(s.name).toBeTruthy()
    }
  })
})

describe('GET /stats and /leaderboard', () => {
  it('counts agents, running agents, launched tokens, 24 h volume and fees', async () => {
    expect((await api('POST', `/agents/${first.id}/start`)).status).toBe(200)
    await launch(second.id, 'venue-b', 'MKTB')
    // The first agent buys 0.1 ETH of its own token: $300 of volume, $1.50 of creator fees.
    const chain = app.services.chain!
    const account = await app.services.wallet!.loadAccount(first.id)
    const w = createWalletClient({ account, chain: chain.chain, transport: http(chain.rpcUrl) })
    const hash = await w.writeContract({
      address: m.contracts.venueA, abi: BondingCurveLaunchpadArtifact.abi, functionName: 'buy',
      args: [curveToken, parseEther('0.1'), 0n, account.address], value: parseEther('0.1'),
    })
    await chain.publicClient.waitForTransactionReceipt({ hash, pollingInterval: 50 })
    await app.services.indexer!.syncOnce()

    const res = await pub('GET', '/stats')
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({
      agents: 2, runningAgents: 1, tokensLaunched: 2, tokensIndexed: 2, trades24h: 1, volume24hUsd: '300.00', feesEarnedUsd: '1.50',
    })
    expect(res.body.indexedBlock).toBeGreaterThan(0)
    expect((await pub('GET', '/stats?x=1')).status).toBe(422)
  })

  it('ranks agents by creator fees earned, public fields only, paged', async () => {
    const res = await pub('GET', '/leaderboard')
    expect(res.status).toBe(200)
    expect(res.body.leaderboard).toEqual([
      { rank: 1, agentId: first.id, name: 'alpha', earnedUsd: '1.50', tokensLaunched: 1 },
      { rank: 2, agentId: second.id, name: 'beta', earnedUsd: '0.00', tokensLaunched: 1 },
    ])
    expect(res.body).toMatchObject({ total: 2, nextCursor: null })
    const p1 = await pub('GET', '/leaderboard?limit=1')
    expect(p1.body.leaderboard.map((e: any) => e.rank)).toEqual([1])
    const p2 = await pub('GET', `/leaderboard?limit=1&cursor=${p1.body.nextCursor}`)
    expect(p2.body.leaderboard).toEqual([expect.objectContaining({ rank: 2, agentId: second.id })])
    expect(p2.body.nextCursor).toBeNull()
    expect((await pub('GET', '/leaderboard?limit=0')).body.field_errors).toHaveProperty('limit')
    expect((await pub('GET', '/leaderboard?cursor=zzz')).body.field_errors).toHaveProperty('cursor')
  })
})

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseEther, type Address, type Hex } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { apiClient, startTestApp, waitForLaunchEnd, type Api, type TestApp } from './support/app.ts'
import { AmmRouterArtifact } from '../src/dev/artifacts/index.ts'
import { walletClientFor, type ChainHandle } from '../src/adapters/chain/chain.ts'

/**
 * POST /backtests through the real route over candles made by real swaps on the embedded chain:
 * a launched token bought once per chain minute (a rising price) by a wallet that is none of
 * ours; the fills are checked against a hand computation from the same candles as
 * GET /tokens/:address/candles shows them. (The arithmetic on a scripted series:
 * src/domain/backtest/simulate.test.ts.)
 */
let app: TestApp
let api: Api
let chain: ChainHandle
let token: Address
let base: number
const SWAPS = 6
const FEE = 1 - 30 / 10_000
/** As the answer rounds: 10 significant digits. */
const r10 = (n: number) => Number(n.toPrecision(10))
const near = (a: number, b: number) => expect(Math.abs(a - b)).toBeLessThanOrEqual(Math.abs(b) * 1e-9)

async function mined(hash: Hex) {
  const r = await chain.publicClient.waitForTransactionReceipt({ hash, pollingInterval: 20 })
  expect(r.status).toBe('success')
}

beforeAll(async () => {
  app = await startTestApp({ RATE_LIMIT_PER_KEY: '1000000', RATE_LIMIT_PER_IP: '1000000' }, { withChain: true })
  chain = app.services.chain!
  ;({ api } = await app.account())
  const launcher = (await api('POST', '/agents', { name: 'launcher', skills: ['token-launch'] })).body.id
  expect((await api('POST', '/dev/faucet', { agentId: launcher, eth: '5' })).status).toBe(200)
  const res = await api('POST', '/launch/venue-b', { agentId: launcher, symbol: 'BTSTX', name: 'Backtest X', quote: 'ETH' }, { 'idempotency-key': 'backtest-launch' })
  token = (await waitForLaunchEnd(api, res.body.id)).tokenAddress
  const key = generatePrivateKey()
  const outsider = walletClientFor(chain, key)
  await chain.publicClient.request({ method: 'anvil_setBalance' as never, params: [privateKeyToAccount(key).address, '0x3635C9ADC5DEA00000'] as never })
  const head = await chain.publicClient.getBlock({ blockTag: 'latest' })
  base = (Math.floor(Number(head.timestamp) / 60) + 1) * 60
  for (let i = 0; i < SWAPS; i++) {
    await chain.publicClient.request({ method: 'evm_setNextBlockTimestamp' as never, params: [base + i * 60 + 1] as never })
    await mined(await outsider.writeContract({
      chain: chain.chain, account: outsider.account!, address: chain.manifest.contracts.router, abi: AmmRouterArtifact.abi,
      functionName: 'swapExactETHForTokens', args: [0n, [chain.manifest.contracts.weth, token], outsider.account!.address, BigInt(base + 86_400)],
      value: parseEther(String(0.02 * (i + 1))),
    }))
  }
  await app.services.indexer!.syncOnce()
}, 90_000)
afterAll(async () => {
  await app?.close()
})

const iso = (s: number) => new Date(s * 1000).toISOString()
const range = () => ({ from: iso(base), to: iso(base + SWAPS * 60), interval: '1m' })

describe('POST /backtests', () => {
  it('replays a DCA and a take-profit over the indexed candles: fills at the closes, as computed by hand', { timeout: 60_000 }, async () => {
    const candles = (await apiClient(`${app.url}/api/v1`)('GET', `/tokens/${token}/candles?interval=1m&from=${base}&to=${base + SWAPS * 60}`)).body.candles as Array<{ time: string; closeUsd: number }>
    expect(candles).toHaveLength(SWAPS)
    const close = candles.map((c) => c.closeUsd)
    for (let i = 1; i < SWAPS; i++) expect(close[i]).toBeGreaterThan(close[i - 1]!)

    const dca = await api('POST', '/backtests', { automation: { name: 'd', kind: 'dca', dca: { tokenIn: 'USDC', tokenOut: token, amountPerRun: '10', everySeconds: 120 } }, ...range() })
    expect(dca.status, JSON.stringify(dca.body)).toBe(200)
    // Ticks at minutes 0, 2, 4: 10 USDC each, less the 0.3 % fee, at those candles' closes.
    expect(dca.body.fills.map((f: any) => [f.at, f.side, f.amountIn, f.priceUsd])).toEqual([0, 2, 4].map((i) => [candles[i]!.time, 'buy', 10, Number(close[i]!.toPrecision(10))]))
    dca.body.fills.forEach((f: any, k: number) => expect(f.amountOut).toBe(r10((10 * FEE) / close[[0, 2, 4][k]!]!)))
    expect(dca.body.start.holdings.USDC).toBe(30)
    const bought = (10 * FEE) / close[0]! + (10 * FEE) / close[2]! + (10 * FEE) / close[4]!
    near(dca.body.final.valueUsd, bought * close[5]!)
    near(dca.body.pnlUsd, bought * close[5]! - 30)
    near(dca.body.buyAndHold.pnlUsd, 30 * (close[5]! / close[0]!) - 30)
    expect(dca.body.assumptions).toMatchObject({ feeBps: 30 })

    // A take-profit between the 3rd and 4th closes sells the (default) 1 token at the 4th.
    const level = ((close[2]! + close[3]!) / 2).toPrecision(8)
    const body = { automation: { name: 't', kind: 'take_profit', take_profit: { token, priceUsd: level } }, ...range() }
    const tp = await api('POST', '/backtests', body)
    expect(tp.status, JSON.stringify(tp.body)).toBe(200)
    expect(tp.body.fills).toHaveLength(1)
    expect(tp.body.fills[0]).toMatchObject({ at: candles[3]!.time, side: 'sell', amountIn: 1 })
    expect(tp.body.fills[0].amountOut).toBe(r10(close[3]! * FEE))
    expect(tp.body.maxDrawdownPct).toBe(0)
    // The same inputs: the same answer.
    const { meta: _, ...again } = (await api('POST', '/backtests', body)).body
    const { meta: __, ...first } = tp.body
    expect(again).toEqual(first)
  })

  it('refuses bad inputs with a code and the field named', async () => {
    const dca = { name: 'd', kind: 'dca', dca: { tokenIn: 'USDC', tokenOut: token, amountPerRun: '10', everySeconds: 120 } }
    const backwards = await api('POST', '/backtests', { automation: dca, from: iso(base + 60), to: iso(base) })
    expect([backwards.status, Object.keys(backwards.body.field_errors)]).toEqual([422, ['from']])
    const sniper = await api('POST', '/backtests', { automation: { name: 's', kind: 'sniper', sniper: { quote: 'ETH', amountIn: '1', maxBuys: 1 } }, ...range() })
    expect([sniper.status, sniper.body.code, Object.keys(sniper.body.field_errors)]).toEqual([422, 'backtest_unsupported', ['automation.kind']])
    const long = await api('POST', '/backtests', { automation: dca, from: iso(base), to: iso(base + 2 * 86_400), interval: '1m' })
    expect([long.status, long.body.code, Object.keys(long.body.field_errors)]).toEqual([422, 'backtest_range_too_long', ['to']])
    const year = await api('POST', '/backtests', { automation: dca, from: iso(base), to: iso(base + 400 * 86_400) })
    expect([year.status, year.body.code]).toEqual([422, 'backtest_range_too_long'])
    const shape = await api('POST', '/backtests', { automation: dca, from: 'yesterday', to: iso(base), interval: '2m' })
    expect([shape.status, Object.keys(shape.body.field_errors).sort()]).toEqual([422, ['from', 'interval']])
  })
})

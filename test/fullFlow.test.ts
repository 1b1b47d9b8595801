import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { erc20Abi, parseEther, type Address } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { startTestApp, type Api, type TestApp } from './support/app.ts'

let app: TestApp
let creatorApi: Api
let traderApi: Api

beforeAll(async () => {
  app = await startTestApp({}, { withChain: true })
  creatorApi = (await app.account({ name: 'creator' })).api
  traderApi = (await app.account({ name: 'trader' })).api
})
afterAll(async () => {
  await app?.close()
})

const until = async <T>(read: () => Promise<T>, ok: (v: T) => boolean, ms = 20_000): Promise<T> => {
  const end = Date.now() + ms
  for (;;) {
    const v = await read()
    if (ok(v) || Date.now() > end) return v
    await new Promise((r) => setTimeout(r, 100))
  }
}

describe('the whole flow through the API', () => {
  it('launch on venue-a, another agent buys with acknowledgement, fees claimed to the payout wallet, leaderboard and ours=true', async () => {
    const payout = privateKeyToAccount(generatePrivateKey()).address
    const creator = (await creatorApi('POST', '/agents', { name: 'Founder', model: 'gpt-4o-mini', skills: ['token-launch'], payout_wallet: payout })).body
    const trader = (await traderApi('POST', '/agents', { name: 'Buyer', model: 'gpt-4o-mini', skills: ['trading'] })).body
    await creatorApi('POST', '/dev/faucet', { agentId: creator.id, eth: '5' })
    await traderApi('POST', '/dev/faucet', { agentId: trader.id, eth: '5' })

    const launch = await creatorApi('POST', '/launch/venue-a', { agentId: creator.id, symbol: 'FLOW', name: 'Flow', quote: 'ETH' }, { 'idempotency-key': 'flow-1' })
    const live = await until(() => creatorApi('GET', `/launch/${launch.body.id}`).then((r) => r.body), (b) => b.status === 'live')
    expect(live.status).toBe('live')
    const token = live.tokenAddress as Address

    const buy = { agentId: trader.id, tokenIn: 'ETH', tokenOut: token, amountIn: '0.2', slippageBps: 300 }
    const refused = await traderApi('POST', '/swap/execute', buy)
    expect(refused.body.code).toBe('unverified_token')
    const bought = await traderApi('POST', '/swap/execute', { ...buy, acknowledgeUnverified: true }, { 'idempotency-key': 'flow-buy' })
    expect(bought.body, JSON.stringify(bought.body)).toMatchObject({ status: 'confirmed' })
    const mine = await creatorApi('POST', '/swap/execute', { agentId: creator.id, tokenIn: 'ETH', tokenOut: token, amountIn: '0.1', slippageBps: 300, acknowledgeUnverified: true })
    expect(mine.body.status).toBe('confirmed')

    // The buyer's portfolio holds the token, valued on the curve, with the USD it paid as cost basis.
    const portfolio = await traderApi('GET', `/wallet/portfolio?agentId=${trader.id}`)
    const held = portfolio.body.holdings.find((h: { address: string | null }) => h.address === token.toLowerCase())
    expect(held).toMatchObject({ symbol: 'FLOW', verified: false, costBasisUsd: bought.body.valueInUsd })
    expect(Number(held.balance)).toBeGreaterThan(0)
    expect(Number(held.valueUsd)).toBeGreaterThan(0)
    expect(Number(held.unrealizedPnlUsd)).toBeCloseTo(Number(held.valueUsd) - Number(held.costBasisUsd), 2)

    // 1% of each buy is the fee, half of it the creator's: (0.2 + 0.1) * 0.5% = 0.0015 ETH.
    const earnings = await creatorApi('GET', `/fees/earnings?agentId=${creator.id}`)
    const row = earnings.body.tokens.find((t: { tokenAddress: string }) => t.tokenAddress === token.toLowerCase())
    expect(row).toMatchObject({ venue: 'venue-a', quote: 'ETH', earned: '0.0015', claimable: '0.0015', claimed: '0' })
    expect(Number(earnings.body.claimableUsd)).toBeGreaterThan(4)

    const claim = await creatorApi('POST', '/fees/claim', { agentId: creator.id, tokenAddress: token })
    expect(claim.body.status).toBe('confirmed')
    const weth = app.services.chain!.manifest.contracts.weth
    const received = await app.services.chain!.publicClient.readContract({ address: weth, abi: erc20Abi, functionName: 'balanceOf', args: [payout] })
    expect(received).toBe(parseEther('0.0015'))
    const after = await creatorApi('GET', `/fees/earnings?agentId=${creator.id}`)
    expect(after.body.tokens.find((t: { tokenAddress: string }) => t.tokenAddress === token.toLowerCase())).toMatchObject({ claimable: '0', claimed: '0.0015' })

    const board = await until(
      () => traderApi('GET', '/leaderboard').then((r) => r.body),
      (b) => b.leaderboard?.[0]?.agentId === creator.id,
    )
    expect(board.leaderboard[0]).toMatchObject({ rank: 1, agentId: creator.id, name: 'Founder', tokensLaunched: 1 })
    expect(JSON.stringify(board)).not.toContain(payout.toLowerCase())

    const ours = await until(
      () => traderApi('GET', `/tokens/${token}/trades?ours=true`).then((r) => r.body),
      (b) => b.trades?.length === 2,
    )
    expect(ours.trades.map((t: { agentId: string; side: string }) => [t.agentId, t.side]).sort()).toEqual(
      [[creator.id, 'buy'], [trader.id, 'buy']].sort(),
    )
  })
})

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createWalletClient, erc20Abi, http, maxUint256, parseEther, type Address, type Hex } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { startTestApp, type Api, type TestApp, waitForLaunchEnd } from './support/app.ts'
import { AmmRouterArtifact, BondingCurveLaunchpadArtifact, FeeLockerArtifact } from '../src/dev/artifacts/index.ts'

let app: TestApp
let api: Api
let other: Api
let creator: { id: string; walletAddress: Address }
let payout: Address
let buyer: { id: string; walletAddress: Address }
let curveToken: Address
let poolToken: Address
let m: NonNullable<TestApp['services']['chain']>['manifest']

const key = () => `k-${Math.random().toString(36).slice(2)}`
const client = () => app.services.chain!.publicClient
const weth = (owner: Address) => client().readContract({ address: m.contracts.weth, abi: erc20Abi, functionName: 'balanceOf', args: [owner] })

const waitLive = (id: string) => waitForLaunchEnd(api, id)

async function launch(venue: string, body: Record<string, unknown>): Promise<Address> {
  const res = await api('POST', `/launch/${venue}`, { agentId: creator.id, quote: 'ETH', ...body }, { 'idempotency-key': key() })
  expect(res.status).toBe(202)
  const live = await waitLive(res.body.id)
  expect(live.status).toBe('live')
  return live.tokenAddress as Address
}

/** Agent B's wallet, driven directly with viem (another account's agent trading our tokens). */
async function buyerWallet() {
  const chain = app.services.chain!
  const account = await app.services.wallet!.loadAccount(buyer.id)
  return createWalletClient({ account, chain: chain.chain, transport: http(chain.rpcUrl) })
}

async function mined(hash: Hex) {
  const r = await client().waitForTransactionReceipt({ hash, pollingInterval: 50 })
  expect(r.status).toBe('success')
}

async function buyOnCurve(token: Address, eth: string) {
  const w = await buyerWallet()
  const value = parseEther(eth)
  await mined(await w.writeContract({
    address: m.contracts.venueA, abi: BondingCurveLaunchpadArtifact.abi, functionName: 'buy', args: [token, value, 0n, w.account.address], value,
  }))
}

const deadline = () => BigInt(Math.floor(Date.now() / 1000) + 600)

async function buyOnPool(token: Address, eth: string) {
  const w = await buyerWallet()
  await mined(await w.writeContract({
    address: m.contracts.router, abi: AmmRouterArtifact.abi, functionName: 'swapExactETHForTokens',
    args: [0n, [m.contracts.weth, token], w.account.address, deadline()], value: parseEther(eth),
  }))
}

async function sellOnPool(token: Address, amount: bigint) {
  const w = await buyerWallet()
  await mined(await w.writeContract({ address: token, abi: erc20Abi, functionName: 'approve', args: [m.contracts.router, maxUint256] }))
  await mined(await w.writeContract({
    address: m.contracts.router, abi: AmmRouterArtifact.abi, functionName: 'swapExactTokensForTokens',
    args: [amount, 0n, [token, m.contracts.weth], w.account.address, deadline()],
  }))
}

const earnings = async (agentId = creator.id, client = api) => client('GET', `/fees/earnings?agentId=${agentId}`)
const row = (body: any, token: Address) => body.tokens.find((t: any) => t.tokenAddress === token.toLowerCase())

beforeAll(async () => {
  app = await startTestApp({}, { withChain: true })
  m = app.services.chain!.manifest
  api = (await app.account()).api
  other = (await app.account({ name: 'other' })).api
  payout = privateKeyToAccount(generatePrivateKey()).address
  const a = await api('POST', '/agents', { name: 'fee-farmer', model: 'gpt-4o-mini', skills: ['token-launch'], payout_wallet: payout })
  expect(a.status).toBe(201)
  creator = a.body
  expect((await api('POST', '/dev/faucet', { agentId: creator.id, eth: '5' })).status).toBe(200)
  const b = await other('POST', '/agents', { name: 'whale', model: 'gpt-4o-mini', skills: ['trading'] })
  buyer = b.body
  expect((await other('POST', '/dev/faucet', { agentId: buyer.id, eth: '20' })).status).toBe(200)
  curveToken = await launch('venue-a', { symbol: 'FEEA', name: 'Fee Curve' })
})
afterAll(async () => {
  await app?.close()
})

describe('venue-a creator fees', () => {
  it('a fresh token has earned nothing, and there is nothing to claim', async () => {
    const res = await earnings()
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ agentId: creator.id, payoutAddress: payout.toLowerCase(), earnedUsd: '0.00', claimableUsd: '0.00' })
    expect(row(res.body, curveToken)).toMatchObject({ symbol: 'FEEA', venue: 'venue-a', quote: 'ETH', feeStream: 'creator', earned: '0', claimable: '0', claimed: '0' })
    const claim = await api('POST', '/fees/claim', { agentId: creator.id })
    expect(claim.status).toBe(422)
    expect(claim.body.code).toBe('nothing_to_claim')
  })

  it("another account's buy on the curve makes fees claimable; the claim lands WETH in the payout wallet", async () => {
    await buyOnCurve(curveToken, '1') // fee 1% = 0.01 ETH, half to the creator
    const before = await earnings()
    expect(row(before.body, curveToken)).toMatchObject({ earned: '0.005', claimable: '0.005', claimed: '0', claimableToken: '0', earnedUsd: '15.00' })
    expect(before.body).toMatchObject({ earnedUsd: '15.00', claimableUsd: '15.00', claimedUsd: '0.00' })

    const k = key()
    const claim = await api('POST', '/fees/claim', { agentId: creator.id }, { 'idempotency-key': k })
    expect(claim.status).toBe(200)
    expect(claim.body).toMatchObject({ agentId: creator.id, status: 'confirmed', to: payout.toLowerCase() })
    expect(claim.body.txHash).toMatch(/^0x[0-9a-f]{64}$/)
    expect(claim.body.claims).toEqual([
      { tokenAddress: curveToken.toLowerCase(), symbol: 'FEEA', venue: 'venue-a', quote: 'ETH', amount: '0.005', tokenAmount: '0', to: payout.toLowerCase(), txHash: claim.body.txHash },
    ])
    expect(await weth(payout)).toBe(parseEther('0.005'))

    const replay = await api('POST', '/fees/claim', { agentId: creator.id }, { 'idempotency-key': k })
    expect(replay.status).toBe(200)
    expect(replay.headers.get('idempotent-replayed')).toBe('true')
    expect(replay.body.id).toBe(claim.body.id)
    expect(await weth(payout)).toBe(parseEther('0.005'))
    // The stored answer lost: the same body finds the claim made, another body is refused.
    await app.services.pool.query(`delete from idempotency_key where key = $1`, [k])
    const otherToken = await api('POST', '/fees/claim', { agentId: creator.id, tokenAddress: '0x000000000000000000000000000000000000dEaD' }, { 'idempotency-key': k })
    expect(otherToken.status).toBe(422)
    expect(otherToken.body.code).toBe('idempotency_key_reused')
    const lost = await api('POST', '/fees/claim', { agentId: creator.id }, { 'idempotency-key': k })
    expect(lost.body).toMatchObject({ id: claim.body.id, txHash: claim.body.txHash, status: 'confirmed' })
    expect(await weth(payout)).toBe(parseEther('0.005'))

    const after = await earnings()
    expect(row(after.body, curveToken)).toMatchObject({ earned: '0.005', claimable: '0', claimed: '0.005' })
    expect(after.body).toMatchObject({ earnedUsd: '15.00', claimableUsd: '0.00', claimedUsd: '15.00' })
    const again = await api('POST', '/fees/claim', { agentId: creator.id, tokenAddress: curveToken })
    expect(again.status).toBe(422)
    expect(again.body.code).toBe('nothing_to_claim')
  })

  it('validation, ownership and the kill switch', async () => {
    expect((await api('GET', '/fees/earnings')).body.field_errors).toHaveProperty('agentId')
    expect((await api('GET', '/fees/earnings?agentId=nope')).status).toBe(422)
    expect((await earnings(creator.id, other)).status).toBe(404)
    expect((await other('POST', '/fees/claim', { agentId: creator.id })).status).toBe(404)
    const bad = await api('POST', '/fees/claim', { agentId: creator.id, tokenAddress: '0x1234', extra: 1 })
    expect(bad.status).toBe(422)
    expect(Object.keys(bad.body.field_errors).sort()).toEqual(['extra', 'tokenAddress'])
    const notOurs = await api('POST', '/fees/claim', { agentId: creator.id, tokenAddress: m.contracts.usdc })
    expect(notOurs.status).toBe(422)
    expect(notOurs.body.field_errors).toHaveProperty('tokenAddress')

    await api('PATCH', `/agents/${creator.id}`, { policy: { paused: true } })
    const paused = await api('POST', '/fees/claim', { agentId: creator.id })
    expect(paused.status).toBe(403)
    expect(paused.body.code).toBe('policy_violation')
    await api('PATCH', `/agents/${creator.id}`, { policy: { paused: false } })
  })
})

describe('venue-b creator fees and several claims at once', () => {
  it('pool swaps accrue quote- and token-side fees in the FeeLocker; one claim operation sends both tokens', async () => {
    poolToken = await launch('venue-b', { symbol: 'FEEB', name: 'Fee Pool' })
    await buyOnPool(poolToken, '1') // 1% hook fee of the WETH in, half to the creator
    const bought = await client().readContract({ address: poolToken, abi: erc20Abi, functionName: 'balanceOf', args: [buyer.walletAddress] })
    await sellOnPool(poolToken, bought / 2n) // 1% of the tokens in, half to the creator
    await buyOnCurve(curveToken, '0.5') // venue-a again: 0.0025 WETH

    const [quoteFees, tokenFees] = await client().readContract({
      address: m.contracts.feeLocker, abi: FeeLockerArtifact.abi, functionName: 'claimable', args: [poolToken],
    })
    expect(quoteFees).toBe(parseEther('0.005'))
    expect(tokenFees).toBe(bought / 2n / 100n / 2n)

    const res = await earnings()
    const b = row(res.body, poolToken)
    expect(b).toMatchObject({ venue: 'venue-b', quote: 'ETH', feeStream: 'creator', earned: '0.005', claimable: '0.005', claimed: '0' })
    expect(Number(b.claimableToken)).toBeGreaterThan(0)
    expect(BigInt(parseEther(b.claimableToken))).toBe(tokenFees)
    // The token-side fees add their value at the pool price on top of 0.005 ETH ($15).
    expect(Number(b.claimableUsd)).toBeGreaterThan(15)
    expect(row(res.body, curveToken)).toMatchObject({ claimable: '0.0025' })

    const before = await weth(payout)
    const claim = await api('POST', '/fees/claim', { agentId: creator.id }, { 'idempotency-key': key() })
    expect(claim.status).toBe(200)
    expect(claim.body.status).toBe('confirmed')
    const claims = claim.body.claims as Array<Record<string, string>>
    expect(claims.map((c) => [c.tokenAddress, c.amount])).toEqual([
      [curveToken.toLowerCase(), '0.0025'],
      [poolToken.toLowerCase(), '0.005'],
    ])
    expect(claims[1]!.tokenAmount).toBe(b.claimableToken)
    expect(new Set(claims.map((c) => c.txHash)).size).toBe(2)
    expect(await weth(payout)).toBe(before + parseEther('0.0075'))
    expect(await client().readContract({ address: poolToken, abi: erc20Abi, functionName: 'balanceOf', args: [payout] })).toBe(tokenFees)
    const { rows } = await app.services.pool.query(`select kind, nonce from chain_tx where request_id like $1 || '%' order by nonce`, [claim.body.id])
    expect(rows.map((r) => r.kind)).toEqual(['claim', 'claim'])

    const after = row((await earnings()).body, poolToken)
    expect(after).toMatchObject({ claimable: '0', claimableToken: '0', claimed: '0.005', claimedToken: b.claimableToken })
  })

  it('concurrent claims pay once and send one claim transaction', async () => {
    await buyOnCurve(curveToken, '0.2') // 0.001 WETH to the creator
    const before = await weth(payout)
    const claimTxs = async () =>
      Number((await app.services.pool.query(`select count(*)::int as n from chain_tx where agent_id = $1 and kind = 'claim'`, [creator.id])).rows[0].n)
    const txsBefore = await claimTxs()
    const results = await Promise.all([
      api('POST', '/fees/claim', { agentId: creator.id }),
      api('POST', '/fees/claim', { agentId: creator.id }),
      api('POST', '/fees/claim', { agentId: creator.id }),
    ])
    const statuses = results.map((r) => r.status).sort()
    expect(statuses[0]).toBe(200)
    expect(results.filter((r) => r.status === 200)).toHaveLength(1)
    for (const loser of results.filter((r) => r.status !== 200)) {
      expect([409, 422]).toContain(loser.status)
      expect(['claim_in_progress', 'nothing_to_claim']).toContain(loser.body.code)
    }
    expect(await weth(payout)).toBe(before + parseEther('0.001'))
    expect(await claimTxs()).toBe(txsBefore + 1)
  })

  it('self-funded tokens have no creator fee stream', async () => {
    const token = await launch('self-funded', { symbol: 'SELFF', name: 'Self Fee', seedAmount: '0.1' })
    const res = await earnings()
    expect(row(res.body, token)).toMatchObject({ venue: 'self-funded', feeStream: 'none', earned: '0', claimable: '0', claimableToken: '0', earnedUsd: '0.00' })
    expect(row(res.body, token).note).toMatch(/no creator fee/)
    const claim = await api('POST', '/fees/claim', { agentId: creator.id, tokenAddress: token })
    expect(claim.status).toBe(422)
    expect(claim.body.code).toBe('nothing_to_claim')
  })
})

describe('platform figures from the indexer', () => {
  it('fee stats by venue and the leaderboard rank the creator first', async () => {
    await app.services.indexer!.syncOnce()
    const stats = await api('GET', '/fees/stats')
    expect(stats.status).toBe(200)
    const venue = (v: string) => stats.body.venues.find((x: any) => x.venue === v)
    // venue-a: 1.7 ETH of buys, 1% fee split evenly: $25.50 each side.
    expect(venue('venue-a')).toMatchObject({ trades: 3, creatorFeesUsd: '25.50', platformFeesUsd: '25.50', totalFeesUsd: '51.00', last24h: { trades: 3, creatorFeesUsd: '25.50' } })
    expect(venue('venue-b').trades).toBe(2)
    expect(Number(venue('venue-b').creatorFeesUsd)).toBeGreaterThan(15)
    expect(venue('self-funded')).toMatchObject({ trades: 0, totalFeesUsd: '0.00' })
    expect(Number(stats.body.totals.totalFeesUsd)).toBeGreaterThan(75)
    expect((await fetch(`${app.url}/api/v1/fees/stats`)).status).toBe(401)

    const board: any = await fetch(`${app.url}/api/v1/leaderboard?limit=10`).then((r) => r.json())
    expect(board.leaderboard[0]).toEqual({ rank: 1, agentId: creator.id, name: 'fee-farmer', earnedUsd: expect.any(String), tokensLaunched: 3 })
    expect(Number(board.leaderboard[0].earnedUsd)).toBeGreaterThan(40.5)
    expect(JSON.stringify(board)).not.toMatch(/wallet|prompt|account/i)
  })
})

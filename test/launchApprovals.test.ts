import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { erc20Abi, type Address } from 'viem'
import { startTestApp, type Api, type TestApp, waitForLaunchEnd } from './support/app.ts'

/**
 * Human approval beyond swaps: a transfer (its USD value) and a self-funded launch (its seed, the
 * funds it commits) above the agent policy's `require_approval_above_usd` wait in
 * `awaiting_approval` with nothing signed, send `approval.requested`, and are approved (then
 * sent) or rejected (then failed, nothing sent) through `/approvals`. Real server, real anvil.
 */
let app: TestApp
let api: Api
let agent: { id: string; walletAddress: Address }
const friend: Address = '0x000000000000000000000000000000000000f00d'
const key = () => `k-${Math.random().toString(36).slice(2)}`

const chain = () => app.services.chain!.publicClient
const usdc = () => app.services.chain!.manifest.contracts.usdc
const usdcOf = (address: Address) => chain().readContract({ address: usdc(), abi: erc20Abi, functionName: 'balanceOf', args: [address] })
const chainTxs = async (requestId: string) =>
  (await app.services.pool.query(`select kind from chain_tx where request_id like $1 || '%'`, [requestId])).rowCount
const eventTypes = async (id: string) =>
  (await app.services.pool.query<{ type: string }>(`select type from account_event where resource_id = $1 and type like 'approval.%' order by type`, [id])).rows.map((r) => r.type)
const seeded = (symbol: string, seedAmount: string) =>
  api('POST', '/launch/self-funded', { agentId: agent.id, symbol, name: `Seed ${symbol}`, quote: 'USDC', seedAmount }, { 'idempotency-key': key() })

beforeAll(async () => {
  app = await startTestApp({}, { withChain: true })
  ;({ api } = await app.account())
  const policy = { max_trade_usd: '10000', max_daily_usd: '100000', require_approval_above_usd: '1000' }
  const created = await api('POST', '/agents', { name: 'careful launcher', model: 'gpt-4o-mini', skills: ['token-launch'], policy })
  expect(created.status, JSON.stringify(created.body)).toBe(201)
  agent = created.body
  expect((await api('POST', '/dev/faucet', { agentId: agent.id, eth: '5', usdc: '10000' })).status).toBe(200)
  expect((await api('POST', `/agents/${agent.id}/whitelist`, { address: friend })).status).toBeLessThan(300)
})
afterAll(async () => {
  await app?.close()
})

describe('approval of transfers and launches above the policy threshold', () => {
  it('a transfer under the threshold is sent at once; one above waits, is approved, then moves the funds once', async () => {
    const small = await api('POST', '/wallet/transfer', { agentId: agent.id, to: friend, token: 'USDC', amount: '10' })
    expect(small.status, JSON.stringify(small.body)).toBe(200)
    expect(small.body.status).toBe('confirmed')
    const before = await usdcOf(friend)
    const big = await api('POST', '/wallet/transfer', { agentId: agent.id, to: friend, token: 'USDC', amount: '1500' })
    expect(big.status, JSON.stringify(big.body)).toBe(202)
    expect(big.body).toMatchObject({ status: 'awaiting_approval', approvalId: big.body.id, txHash: null })
    expect(await chainTxs(big.body.id)).toBe(0)
    const pending = await api('GET', `/approvals/${big.body.id}`)
    expect(pending.body).toMatchObject({ status: 'pending', kind: 'transfer', usdValue: '1500.00', thresholdUsd: '1000', operation: { status: 'awaiting_approval', token: usdc().toLowerCase(), to: friend } })
    expect(await eventTypes(big.body.id)).toEqual(['approval.requested'])
    const approved = await api('POST', `/approvals/${big.body.id}/approve`, {})
    expect(approved.status, JSON.stringify(approved.body)).toBe(200)
    await expect.poll(async () => (await api('GET', `/approvals/${big.body.id}`)).body.operation.status, { timeout: 20_000 }).toBe('confirmed')
    expect((await usdcOf(friend)) - before).toBe(1_500_000_000n)
    expect(await eventTypes(big.body.id)).toEqual(['approval.decided', 'approval.requested'])
  })

  it('a self-funded launch whose seed is above the threshold waits with nothing sent; approved, it goes live with that seed', async () => {
    const res = await seeded('OKSEED', '2000')
    expect(res.status, JSON.stringify(res.body)).toBe(202)
    expect(res.body).toMatchObject({ status: 'awaiting_approval', approvalId: res.body.id, approval: { status: 'pending', thresholdUsd: '1000' }, txHash: null })
    expect(await chainTxs(res.body.id)).toBe(0)
    const listed = await api('GET', '/approvals?status=pending')
    expect(listed.body.approvals.map((a: { id: string }) => a.id)).toEqual([res.body.id])
    expect(listed.body.approvals[0]).toMatchObject({
      kind: 'launch', agentId: agent.id, usdValue: '2000.00',
      operation: { id: res.body.id, kind: 'launch', status: 'awaiting_approval', venue: 'self-funded', symbol: 'OKSEED', quote: 'USDC', seedAmount: '2000' },
    })
    await expect.poll(() => eventTypes(res.body.id), { timeout: 10_000 }).toEqual(['approval.requested'])
    const approved = await api('POST', `/approvals/${res.body.id}/approve`, { reason: 'go' })
    expect(approved.status, JSON.stringify(approved.body)).toBe(200)
    expect(approved.body).toMatchObject({ status: 'approved', reason: 'go', decidedBy: expect.stringMatching(/^key:/) })
    const live = await waitForLaunchEnd(api, res.body.id)
    expect(live, JSON.stringify(live)).toMatchObject({ status: 'live', approval: { status: 'approved' } })
    expect(await usdcOf(live.poolAddress)).toBe(2_000_000_000n)
    expect(await eventTypes(res.body.id)).toEqual(['approval.decided', 'approval.requested'])
  })

  it('a rejected launch fails with approval_rejected and sends nothing; a launch committing no funds never waits', async () => {
    const res = await seeded('NOSEED', '3000')
    expect(res.body.status).toBe('awaiting_approval')
    const rejected = await api('POST', `/approvals/${res.body.id}/reject`, { reason: 'too much' })
    expect(rejected.status).toBe(200)
    expect(rejected.body).toMatchObject({ status: 'rejected', reason: 'too much', operation: { status: 'failed', error: { code: 'approval_rejected' } } })
    expect((await api('GET', `/launch/${res.body.id}`)).body).toMatchObject({ status: 'failed', error: { code: 'approval_rejected' } })
    expect(await chainTxs(res.body.id)).toBe(0)
    expect((await api('POST', `/approvals/${res.body.id}/approve`, {})).body.code).toBe('approval_decided')

    const curve = await api('POST', '/launch/venue-a', { agentId: agent.id, symbol: 'FREE', name: 'Free', quote: 'ETH' }, { 'idempotency-key': key() })
    expect(curve.status).toBe(202)
    expect(curve.body).not.toHaveProperty('approvalId')
    expect((await waitForLaunchEnd(api, curve.body.id)).status).toBe('live')
  })
})

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type Api, type TestApp } from './support/app.ts'
import { startReceiver } from './support/webhookReceiver.ts'

/**
 * Human approval: a swap above the agent policy's `require_approval_above_usd` waits in
 * `awaiting_approval` (nothing signed, no nonce taken) until an owner approves it (it then
 * confirms on chain), rejects it, or lets it expire (a durable timer). Real server, real anvil.
 */
let app: TestApp
let api: Api
let agent: { id: string; walletAddress: `0x${string}` }
let receiver: Awaited<ReturnType<typeof startReceiver>>

const chain = () => app.services.chain!.publicClient
const nonce = () => chain().getTransactionCount({ address: agent.walletAddress })
const ethBalance = () => chain().getBalance({ address: agent.walletAddress })
/** About 2,100 USD of ETH at the reference pool's price (ETH near 3,000 USD). */
const BIG = '0.7'
const bigSwap = () => api('POST', '/swap/execute', { agentId: agent.id, tokenIn: 'ETH', tokenOut: 'USDC', amountIn: BIG, slippageBps: 100 })

beforeAll(async () => {
  app = await startTestApp({ WEBHOOK_POLL_MS: '50' }, { withChain: true })
  ;({ api } = await app.account())
  receiver = await startReceiver()
  const hook = await api('POST', '/webhooks', { url: receiver.url(), events: ['approval.requested', 'approval.decided'] })
  expect(hook.status).toBe(201)
  receiver.trust(hook.body.secret)
  const policy = { max_trade_usd: '10000', max_daily_usd: '100000', require_approval_above_usd: '1000' }
  const created = await api('POST', '/agents', { name: 'careful', model: 'gpt-4o-mini', skills: [], policy })
  expect(created.status, JSON.stringify(created.body)).toBe(201)
  agent = created.body
  expect(agent).toMatchObject({ policy: { requireApprovalAboveUsd: '1000', approvalTtlSeconds: 900 } })
  expect((await api('POST', '/dev/faucet', { agentId: agent.id, eth: '5', usdc: '0' })).status).toBe(200)
})
afterAll(async () => {
  await receiver?.close()
  await app?.close()
})

describe('human approval of a swap above the policy threshold', () => {
  it('a swap under the threshold confirms at once', async () => {
    const small = await api('POST', '/swap/execute', { agentId: agent.id, tokenIn: 'ETH', tokenOut: 'USDC', amountIn: '0.01', slippageBps: 100 })
    expect(small.status).toBe(200)
    expect(small.body.status).toBe('confirmed')
    expect(small.body).not.toHaveProperty('approvalId')
  })

  it('waits (202, nothing sent), is approved, confirms: the wallet nonce and balance move once', async () => {
    const [n0, b0] = [await nonce(), await ethBalance()]
    const swap = await bigSwap()
    expect(swap.status, JSON.stringify(swap.body)).toBe(202)
    expect(swap.body).toMatchObject({ status: 'awaiting_approval', approvalId: swap.body.id, txHash: null })
    expect(Number(swap.body.valueInUsd)).toBeGreaterThan(1000)
    expect(await nonce()).toBe(n0)

    const pending = await api('GET', '/approvals?status=pending')
    expect(pending.status).toBe(200)
    expect(pending.body.approvals.map((a: { id: string }) => a.id)).toEqual([swap.body.id])
    expect(pending.body.approvals[0]).toMatchObject({
      status: 'pending', agentId: agent.id, kind: 'swap', thresholdUsd: '1000', usdValue: swap.body.valueInUsd, decidedAt: null, decidedBy: null,
      operation: { id: swap.body.id, status: 'awaiting_approval', tokenIn: 'ETH', tokenOut: 'USDC', amountIn: BIG },
    })
    await expect.poll(() => receiver.ofType('approval.requested').length, { timeout: 10_000 }).toBe(1)
    expect(receiver.ofType('approval.requested')[0]!.payload.data).toMatchObject({ id: swap.body.id, status: 'pending' })

    const approved = await api('POST', `/approvals/${swap.body.id}/approve`, { reason: 'looks right' })
    expect(approved.status, JSON.stringify(approved.body)).toBe(200)
    expect(approved.body).toMatchObject({ status: 'approved', reason: 'looks right', decidedBy: expect.stringMatching(/^key:/), decidedAt: expect.any(String) })
    await expect.poll(async () => (await api('GET', `/swap/${swap.body.id}`)).body.status, { timeout: 20_000 }).toBe('confirmed')
    expect(await nonce()).toBe(n0 + 1)
    expect(b0 - (await ethBalance())).toBeGreaterThanOrEqual(700_000_000_000_000_000n)
    expect((await api('POST', `/approvals/${swap.body.id}/approve`, {})).body.code).toBe('approval_decided')
    await expect.poll(() => receiver.ofType('approval.decided').length, { timeout: 10_000 }).toBe(1)
    expect(receiver.ofType('approval.decided')[0]!.payload.data).toMatchObject({ id: swap.body.id, status: 'approved' })
  })

  it('a rejected swap fails with approval_rejected and sends nothing', async () => {
    const n0 = await nonce()
    const swap = await bigSwap()
    expect(swap.body.status).toBe('awaiting_approval')
    const rejected = await api('POST', `/approvals/${swap.body.id}/reject`, { reason: 'not today' })
    expect(rejected.status).toBe(200)
    expect(rejected.body).toMatchObject({ status: 'rejected', reason: 'not today', operation: { status: 'failed', error: { code: 'approval_rejected' } } })
    const after = await api('GET', `/swap/${swap.body.id}`)
    expect(after.body).toMatchObject({ status: 'failed', error: { code: 'approval_rejected' } })
    expect(await nonce()).toBe(n0)
    expect((await api('GET', `/approvals/${swap.body.id}`)).body.status).toBe('rejected')
    expect((await api('POST', `/approvals/${swap.body.id}/approve`, {})).status).toBe(409)
  })

  it('an approve racing a reject: one decision wins, the loser is 409 approval_decided (never invalid_state), at most one transaction', async () => {
    for (let round = 0; round < 3; round++) {
      const n0 = await nonce()
      const swap = await bigSwap()
      expect(swap.body.status).toBe('awaiting_approval')
      const answers = await Promise.all([
        api('POST', `/approvals/${swap.body.id}/approve`, {}),
        api('POST', `/approvals/${swap.body.id}/reject`, {}),
      ])
      const won = answers.filter((a) => a.status === 200)
      const lost = answers.filter((a) => a.status !== 200)
      expect({ round, won: won.length, lost: lost.map((a) => [a.status, a.body.code]) }).toEqual({ round, won: 1, lost: [[409, 'approval_decided']] })
      const decided = (await api('GET', `/approvals/${swap.body.id}`)).body
      expect(decided.status).toBe(won[0]!.body.status)
      await expect.poll(async () => (await api('GET', `/swap/${swap.body.id}`)).body.status, { timeout: 20_000 }).toMatch(/^(confirmed|failed)$/)
      expect(await nonce()).toBe(n0 + (decided.status === 'approved' ? 1 : 0))
    }
  })

  it('an approval not decided within approval_ttl_seconds expires as rejected; nothing is sent', async () => {
    // A shorter wait is a tightening: it applies at once.
    const patched = await api('PATCH', `/agents/${agent.id}`, { policy: { approval_ttl_seconds: 2 } })
    expect(patched.status, JSON.stringify(patched.body)).toBe(200)
    expect(patched.body.policy.approvalTtlSeconds).toBe(2)
    const n0 = await nonce()
    const swap = await bigSwap()
    expect(swap.body.status).toBe('awaiting_approval')
    await expect.poll(async () => (await api('GET', `/approvals/${swap.body.id}`)).body.status, { timeout: 15_000 }).toBe('rejected')
    const approval = (await api('GET', `/approvals/${swap.body.id}`)).body
    expect(approval).toMatchObject({ reason: 'expired', decidedBy: null, operation: { status: 'failed', error: { code: 'approval_expired' } } })
    expect(await nonce()).toBe(n0)
    expect((await api('GET', '/approvals?status=rejected')).body.approvals.map((a: { id: string }) => a.id)).toContain(swap.body.id)
    expect((await api('GET', '/approvals?status=pending')).body.approvals).toEqual([])
  })

  it('approved after the price moved beyond its slippage: fails with price_moved, nothing sent', async () => {
    // Back to a long wait (a loosening: no hold on the embedded chain), so it cannot expire first.
    expect((await api('PATCH', `/agents/${agent.id}`, { policy: { approval_ttl_seconds: 900 } })).body.policy.approvalTtlSeconds).toBe(900)
    const n0 = await nonce()
    const swap = await bigSwap()
    expect(swap.body.status).toBe('awaiting_approval')
    // Another agent sells a lot of ETH into the same pool: ETH buys far less USDC now.
    const whale = (await api('POST', '/agents', { name: 'whale', model: 'gpt-4o-mini', skills: [], policy: { max_trade_usd: '1000000', max_daily_usd: '1000000', max_price_impact_bps: 10000 } })).body
    expect((await api('POST', '/dev/faucet', { agentId: whale.id, eth: '60', usdc: '0' })).status).toBe(200)
    const dump = await api('POST', '/swap/execute', { agentId: whale.id, tokenIn: 'ETH', tokenOut: 'USDC', amountIn: '50', slippageBps: 5000 })
    expect(dump.body.status, JSON.stringify(dump.body)).toBe('confirmed')
    const approved = await api('POST', `/approvals/${swap.body.id}/approve`, {})
    expect(approved.status).toBe(200)
    expect(approved.body).toMatchObject({ status: 'approved', operation: { status: 'failed', error: { code: 'price_moved', message: expect.stringContaining('under its minimum') } } })
    expect(await nonce()).toBe(n0)
  })

  it('pages GET /approvals with limit and cursor (nextCursor null on the last page); a bad cursor is 422 naming it', async () => {
    const all = await api('GET', '/approvals?limit=200')
    expect(all.status).toBe(200)
    expect(all.body.nextCursor).toBeNull()
    const ids: string[] = all.body.approvals.map((a: { id: string }) => a.id)
    expect(ids.length).toBeGreaterThanOrEqual(4)
    const paged: string[] = []
    let cursor: string | null = null
    do {
      const page: { status: number; body: { approvals: { id: string }[]; nextCursor: string | null } } =
        await api('GET', `/approvals?limit=1${cursor ? `&cursor=${cursor}` : ''}`)
      expect(page.status).toBe(200)
      expect(page.body.approvals.length).toBe(1)
      paged.push(page.body.approvals[0]!.id)
      cursor = page.body.nextCursor
    } while (cursor && paged.length <= ids.length)
    expect(paged).toEqual(ids)
    const rejected = await api('GET', '/approvals?status=rejected&limit=1')
    expect(rejected.body.nextCursor).toEqual(expect.any(String))
    const next = await api('GET', `/approvals?status=rejected&limit=1&cursor=${rejected.body.nextCursor}`)
    expect(next.body.approvals.every((a: { status: string }) => a.status === 'rejected')).toBe(true)
    expect(next.body.approvals[0].id).not.toBe(rejected.body.approvals[0].id)
    const bad = await api('GET', '/approvals?cursor=nope')
    expect(bad.status).toBe(422)
    expect(bad.body.field_errors).toEqual({ cursor: 'Invalid cursor.' })
  })
})

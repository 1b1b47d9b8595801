import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type Api, type TestApp } from './support/app.ts'
import { startReceiver } from './support/webhookReceiver.ts'

/**
 * The account events `deposit.credited`, `guardrail.change_applied`,
 * `guardrail.change_requested`, `credits.low` and `agent.low_balance`: written by triggers with the change that causes them, delivered
 * to the account's endpoints. Real server, real anvil, a one-hour guardrail hold.
 */
let app: TestApp
let api: Api
let accountId: string
let receiver: Awaited<ReturnType<typeof startReceiver>>

beforeAll(async () => {
  app = await startTestApp({ WEBHOOK_POLL_MS: '50', WHITELIST_HOLD_SECONDS: '3600' }, { withChain: true })
  ;({ api, accountId } = await app.account())
  receiver = await startReceiver()
  const hook = await api('POST', '/webhooks', { url: receiver.url(), events: ['deposit.credited', 'guardrail.change_applied', 'guardrail.change_requested', 'credits.low', 'agent.low_balance'] })
  expect(hook.status).toBe(201)
  receiver.trust(hook.body.secret)
})
afterAll(async () => {
  await receiver?.close()
  await app?.close()
})

describe('guardrail and deposit events', () => {
  it('a tightening is guardrail.change_applied; a loosening is guardrail.change_requested with its effectiveAt', async () => {
    const agent = (await api('POST', '/agents', { name: 'guarded', skills: [] })).body
    const tight = await api('PATCH', `/agents/${agent.id}`, { policy: { max_trade_usd: '50', require_approval_above_usd: '20' } })
    expect(tight.status).toBe(200)
    await expect.poll(() => receiver.ofType('guardrail.change_applied').length, { timeout: 10_000 }).toBe(1)
    expect(receiver.ofType('guardrail.change_applied')[0]!.payload.data).toMatchObject({
      agentId: agent.id, change: 'policy.change', before: { max_trade_usd: '1000', require_approval_above_usd: null }, after: { max_trade_usd: '50', require_approval_above_usd: '20' },
    })
    const loose = await api('PATCH', `/agents/${agent.id}`, { policy: { max_trade_usd: '500' } })
    expect(loose.body.pendingChanges).toHaveLength(1)
    await expect.poll(() => receiver.ofType('guardrail.change_requested').length, { timeout: 10_000 }).toBe(1)
    const requested = receiver.ofType('guardrail.change_requested')[0]!.payload.data
    expect(requested).toMatchObject({ agentId: agent.id, change: 'policy.change', after: { max_trade_usd: '500' } })
    expect(Date.parse(requested.effectiveAt)).toBeGreaterThan(Date.now() + 3500_000)
  })

  it('a deposit to the account deposit address is deposit.credited once', async () => {
    expect((await api('POST', '/dev/faucet', { accountDeposit: true, usdc: '10' })).status).toBe(200)
    await expect.poll(() => receiver.ofType('deposit.credited').length, { timeout: 20_000 }).toBe(1)
    expect(receiver.ofType('deposit.credited')[0]!.payload.data).toMatchObject({ asset: 'USDC', amountBaseUnits: '10000000', credits: 10_000, usdValue: '10.00' })
    const { rows } = await app.services.pool.query(`select count(*)::int as n from account_event where type = 'deposit.credited'`)
    expect(rows[0].n).toBe(1)
  })

  it('a credit balance falling below 200 is credits.low, once per crossing', async () => {
    // The ledger's balance as a spend would move it (the trigger is on the balance, whoever writes it).
    const setCredits = (n: number) => app.services.pool.query('update account set credits = $2 where id = $1', [accountId, n])
    await setCredits(150)
    await setCredits(100)
    await expect.poll(() => receiver.ofType('credits.low').length, { timeout: 10_000 }).toBe(1)
    expect(receiver.ofType('credits.low')[0]!.payload.data).toEqual({ credits: 150, creditsReserved: 0, threshold: 200 })
    await setCredits(5000)
    await setCredits(10)
    await expect.poll(() => receiver.ofType('credits.low').length, { timeout: 10_000 }).toBe(2)
  })

  it('a swap that leaves the wallet less than 0.005 ETH for gas is agent.low_balance; one that leaves more is not', async () => {
    const agent = (await api('POST', '/agents', { name: 'thin', skills: [] })).body
    expect((await api('POST', '/dev/faucet', { agentId: agent.id, eth: '0.03' })).status).toBe(200)
    const swap = (amountIn: string) => api('POST', '/swap/execute', { agentId: agent.id, tokenIn: 'ETH', tokenOut: 'USDC', amountIn, slippageBps: 100 })
    expect((await swap('0.005')).body.status).toBe('confirmed')
    const last = await swap('0.02')
    expect(last.body.status).toBe('confirmed')
    await expect.poll(() => receiver.ofType('agent.low_balance').length, { timeout: 10_000 }).toBe(1)
    expect(receiver.ofType('agent.low_balance')[0]!.payload.data).toMatchObject({ agentId: agent.id, operationId: last.body.id, asset: 'ETH', threshold: '0.005' })
    expect(Number(receiver.ofType('agent.low_balance')[0]!.payload.data.balance)).toBeLessThan(0.005)
  })
})

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type Api, type TestApp } from './support/app.ts'
import { startReceiver } from './support/webhookReceiver.ts'

/**
 * The thresholds of the owner's warnings are settings: CREDITS_LOW_THRESHOLD (`credits.low`, read
 * by the database trigger from service_setting) and LOW_BALANCE_ETH (`agent.low_balance`), here
 * 1,000 credits and 0.05 ETH instead of the defaults (200, 0.005). Real server, real anvil.
 */
let app: TestApp
let api: Api
let accountId: string
let receiver: Awaited<ReturnType<typeof startReceiver>>

beforeAll(async () => {
  app = await startTestApp({ WEBHOOK_POLL_MS: '50', CREDITS_LOW_THRESHOLD: '1000', LOW_BALANCE_ETH: '0.05' }, { withChain: true })
  ;({ api, accountId } = await app.account())
  receiver = await startReceiver()
  const hook = await api('POST', '/webhooks', { url: receiver.url(), events: ['credits.low', 'agent.low_balance'] })
  expect(hook.status).toBe(201)
  receiver.trust(hook.body.secret)
})
afterAll(async () => {
  await receiver?.close()
  await app?.close()
})

describe('configured warning thresholds', () => {
  it('credits.low when the balance falls below CREDITS_LOW_THRESHOLD, once per crossing', async () => {
    const setCredits = (n: number) => app.services.pool.query('update account set credits = $2 where id = $1', [accountId, n])
    await setCredits(1500)
    await setCredits(1200)
    await setCredits(900)
    await setCredits(500)
    await expect.poll(() => receiver.ofType('credits.low').length, { timeout: 10_000 }).toBe(1)
    expect(receiver.ofType('credits.low')[0]!.payload.data).toEqual({ credits: 900, creditsReserved: 0, threshold: 1000 })
    await setCredits(2000)
    await setCredits(999)
    await expect.poll(() => receiver.ofType('credits.low').length, { timeout: 10_000 }).toBe(2)
  })

  it('agent.low_balance when a money move leaves less than LOW_BALANCE_ETH', async () => {
    const agent = (await api('POST', '/agents', { name: 'thin', skills: [] })).body
    expect((await api('POST', '/dev/faucet', { agentId: agent.id, eth: '0.1' })).status).toBe(200)
    const swap = (amountIn: string) => api('POST', '/swap/execute', { agentId: agent.id, tokenIn: 'ETH', tokenOut: 'USDC', amountIn, slippageBps: 100 })
    expect((await swap('0.01')).body.status).toBe('confirmed')
    const last = await swap('0.05')
    expect(last.body.status).toBe('confirmed')
    await expect.poll(() => receiver.ofType('agent.low_balance').length, { timeout: 10_000 }).toBe(1)
    expect(receiver.ofType('agent.low_balance')[0]!.payload.data).toMatchObject({ agentId: agent.id, operationId: last.body.id, asset: 'ETH', threshold: '0.05' })
    expect(Number(receiver.ofType('agent.low_balance')[0]!.payload.data.balance)).toBeLessThan(0.05)
  })
})

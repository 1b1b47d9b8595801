import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type Api, type TestApp } from './support/app.ts'
import { startReceiver } from './support/webhookReceiver.ts'
import { waitFor } from './support/waitFor.ts'

let app: TestApp
let api: Api
let accountId: string
let receiver: Awaited<ReturnType<typeof startReceiver>>

/** Fast retries, a short retry window and a short disabling streak, so the schedule runs in a test. */
const FAST = {
  WEBHOOK_RETRY_BASE_SECONDS: '0.02', WEBHOOK_RETRY_MAX_SECONDS: '0.1', WEBHOOK_RETRY_WINDOW_SECONDS: '1',
  WEBHOOK_DISABLE_AFTER_SECONDS: '2', WEBHOOK_POLL_MS: '50',
}

async function endpoint(events: string[], url = receiver.url()) {
  const res = await api('POST', '/webhooks', { url, events, description: 'test' })
  expect(res.status).toBe(201)
  receiver.trust(res.body.secret)
  return res.body as { id: string; secret: string }
}

const deliveries = async (id: string) => (await api('GET', `/webhooks/${id}/deliveries`)).body.deliveries as Array<Record<string, any>>

beforeAll(async () => {
  app = await startTestApp(FAST, { withChain: true })
  ;({ api, accountId } = await app.account())
  receiver = await startReceiver()
})
afterAll(async () => {
  await receiver?.close()
  await app?.close()
})

describe('webhooks', () => {
  it('delivers swap.confirmed once, signed, after a swap confirms on the chain; the event is recorded once', async () => {
    const hook = await endpoint(['swap.confirmed', 'swap.failed'])
    expect(hook.secret).toMatch(/^whsec_[A-Za-z0-9+/=]{40,}$/)
    expect((await api('GET', `/webhooks/${hook.id}`)).body).not.toHaveProperty('secret')

    const agent = (await api('POST', '/agents', { name: 'hooked', model: 'gpt-4o-mini', skills: [] })).body
    expect((await api('POST', '/dev/faucet', { agentId: agent.id, eth: '5', usdc: '0' })).status).toBe(200)
    const swap = await api('POST', '/swap/execute', { agentId: agent.id, tokenIn: 'ETH', tokenOut: 'USDC', amountIn: '0.1', slippageBps: 100 })
    expect(swap.body.status).toBe('confirmed')

    await waitFor(() => receiver.ofType('swap.confirmed').length === 1, 10_000)
    const [got] = receiver.ofType('swap.confirmed')
    expect(got!.payload.data).toMatchObject({ id: swap.body.id, status: 'confirmed', txHash: swap.body.txHash, amountIn: '0.1' })
    expect(got!.verifiedWith).toEqual([hook.secret])
    expect(got!.id).toMatch(/^msg_[0-9a-f]{24}$/)
    await waitFor(async () => (await deliveries(hook.id))[0]?.status === 'delivered')
    expect((await deliveries(hook.id))[0]).toMatchObject({ id: got!.id, type: 'swap.confirmed', attempts: 1, lastStatusCode: 200, lastError: null, nextAttemptAt: null })

    const { rows } = await app.services.pool.query(`select type from account_event where resource_id = $1`, [swap.body.id])
    expect(rows).toEqual([{ type: 'swap.confirmed' }])
    // Nothing more arrives for it (an event is fanned out once).
    await api('POST', `/webhooks/${hook.id}/test`)
    await waitFor(() => receiver.ofType('webhook.test').length === 1)
    expect(receiver.ofType('swap.confirmed')).toHaveLength(1)
  })

  it('retries a failing endpoint with backoff: the 4th attempt delivers, under the same webhook-id', async () => {
    const hook = await endpoint(['swap.confirmed'])
    receiver.answerWith((r, n) => ({ status: r.payload.type === 'webhook.test' && r.payload.data.webhook.id === hook.id && n <= 3 ? 500 : 200 }))
    expect((await api('POST', `/webhooks/${hook.id}/test`)).status).toBe(202)
    await waitFor(async () => (await deliveries(hook.id))[0]?.status === 'delivered')
    const mine = receiver.received.filter((r) => r.payload.data?.webhook?.id === hook.id)
    expect(mine).toHaveLength(4)
    expect(new Set(mine.map((r) => r.id)).size).toBe(1)
    expect((await deliveries(hook.id))[0]).toMatchObject({ id: mine[0]!.id, status: 'delivered', attempts: 4, lastStatusCode: 200 })
    receiver.answerWith(() => ({ status: 200 }))
  })

  it('a delivery that keeps failing is dead after the retry window; redeliver sends it again with the same id', async () => {
    const hook = await endpoint(['swap.confirmed'])
    let failing = true
    receiver.answerWith((r) => ({ status: failing && r.payload.data?.webhook?.id === hook.id ? 503 : 200 }))
    await api('POST', `/webhooks/${hook.id}/test`)
    await waitFor(async () => (await deliveries(hook.id))[0]?.status === 'dead', 5000)
    const [dead] = await deliveries(hook.id)
    expect(dead).toMatchObject({ lastStatusCode: 503, lastError: 'answered 503', nextAttemptAt: null })
    expect(dead!.attempts).toBeGreaterThan(1)
    failing = false
    const again = await api('POST', `/webhooks/${hook.id}/deliveries/${dead!.id}/redeliver`)
    expect(again.status).toBe(200)
    await waitFor(async () => (await deliveries(hook.id))[0]?.status === 'delivered')
    expect(receiver.received.filter((r) => r.id === dead!.id).length).toBe(dead!.attempts + 1)
  })

  it('signs with the old and the new secret for a while after a rotation', async () => {
    const hook = await endpoint(['swap.confirmed'])
    const rotated = await api('POST', `/webhooks/${hook.id}/rotate-secret`)
    expect(rotated.status).toBe(200)
    expect(rotated.body.secret).toMatch(/^whsec_/)
    expect(rotated.body.secret).not.toBe(hook.secret)
    receiver.trust(rotated.body.secret)
    await api('POST', `/webhooks/${hook.id}/test`)
    await waitFor(() => receiver.received.some((r) => r.payload.data?.webhook?.id === hook.id))
    const got = receiver.received.find((r) => r.payload.data?.webhook?.id === hook.id)!
    expect(got.verifiedWith.sort()).toEqual([hook.secret, rotated.body.secret].sort())
    expect(got.signature.split(' ')).toHaveLength(2)
  })

  it('disables an endpoint failing for the disabling streak and tells the account\'s other endpoints', async () => {
    const watcher = await endpoint(['swap.failed'])
    const broken = await endpoint(['swap.confirmed'], receiver.url('/broken'))
    receiver.answerWith((r) => ({ status: r.payload.data?.webhook?.id === broken.id ? 500 : 200 }))
    await waitFor(async () => {
      await api('POST', `/webhooks/${broken.id}/test`)
      return (await api('GET', `/webhooks/${broken.id}`)).body.enabled === false
    }, 8000)
    expect((await api('GET', `/webhooks/${broken.id}`)).body).toMatchObject({ enabled: false, disabledReason: 'failing' })
    await waitFor(() => receiver.ofType('webhook.disabled').some((r) => r.payload.data.id === broken.id))
    const told = receiver.ofType('webhook.disabled').filter((r) => r.payload.data.id === broken.id)
    expect(told.length).toBeGreaterThanOrEqual(1)
    expect(told.every((r) => r.verifiedWith.includes(watcher.secret) || !r.verifiedWith.includes(broken.secret))).toBe(true)
    receiver.answerWith(() => ({ status: 200 }))
  })

  it('does not follow a redirect (to a private address here): the attempt fails with the 3xx', async () => {
    const hook = await endpoint(['swap.confirmed'], receiver.url('/moved'))
    receiver.answerWith((r) => (r.payload.data?.webhook?.id === hook.id ? { status: 302, headers: { location: 'http://10.0.0.1/hook' } } : { status: 200 }))
    await api('POST', `/webhooks/${hook.id}/test`)
    await waitFor(async () => (await deliveries(hook.id))[0]?.lastStatusCode === 302)
    expect((await deliveries(hook.id))[0]).toMatchObject({ status: expect.stringMatching(/^(failed|pending)$/), lastError: 'redirect not followed (302)' })
    expect((await api('PATCH', `/webhooks/${hook.id}`, { enabled: false })).status).toBe(200)
    receiver.answerWith(() => ({ status: 200 }))
  })

  it('manages endpoints: list, patch, delete; another account sees none of them', async () => {
    const hook = await endpoint(['launch.live'])
    const patched = await api('PATCH', `/webhooks/${hook.id}`, { events: ['launch.live', 'launch.failed'], enabled: false, description: null })
    expect(patched.body).toMatchObject({ events: ['launch.live', 'launch.failed'], enabled: false, description: null })
    expect((await api('GET', '/webhooks')).body.webhooks.map((w: { id: string }) => w.id)).toContain(hook.id)
    const other = (await app.account({ name: 'other' })).api
    expect((await other('GET', `/webhooks/${hook.id}`)).status).toBe(404)
    expect((await other('GET', '/webhooks')).body.webhooks).toEqual([])
    expect((await api('POST', '/webhooks', { url: receiver.url(), events: ['nope'] })).body.code).toBe('validation_failed')
    expect((await api('DELETE', `/webhooks/${hook.id}`)).status).toBe(200)
    expect((await api('GET', `/webhooks/${hook.id}`)).status).toBe(404)
    expect(accountId).toBeTruthy()
  })
})

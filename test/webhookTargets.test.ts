import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type Api, type TestApp } from './support/app.ts'
import { startReceiver } from './support/webhookReceiver.ts'
import { waitFor } from './support/waitFor.ts'

let app: TestApp
let api: Api
let accountId: string
let receiver: Awaited<ReturnType<typeof startReceiver>>

// Private targets refused (the production default), plain http allowed so that only the address decides.
beforeAll(async () => {
  app = await startTestApp({ WEBHOOK_PRIVATE_TARGETS: 'none', WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_POLL_MS: '50' })
  ;({ api, accountId } = await app.account())
  receiver = await startReceiver()
})
afterAll(async () => {
  await receiver?.close()
  await app?.close()
})

describe('webhook targets (SSRF)', () => {
  it.each([
    ['http://127.0.0.2/hook', 'loopback'],
    ['http://10.0.0.1/hook', 'private'],
    ['http://169.254.169.254/latest/meta-data', 'metadata'],
    ['http://[::1]/hook', 'loopback'],
    ['http://[::ffff:10.0.0.1]/hook', 'private'],
    ['http://0x7f.1/hook', 'loopback'],
    ['http://localhost:9/hook', 'loopback'],
    ['ftp://8.8.8.8/hook', 'http and https'],
  ])('refuses %s at creation', async (url, why) => {
    const res = await api('POST', '/webhooks', { url, events: ['swap.confirmed'] })
    expect(res.status).toBe(422)
    expect(res.body.code).toBe('validation_failed')
    expect(res.body.field_errors.url).toContain(why)
  })

  it('refuses a private URL set by PATCH, and keeps the endpoint as it was', async () => {
    // Created disabled: no event is ever sent to this public address.
    const created = await api('POST', '/webhooks', { url: 'https://93.184.215.14/hook', events: ['swap.confirmed'], enabled: false })
    expect(created.status).toBe(201)
    const res = await api('PATCH', `/webhooks/${created.body.id}`, { url: 'http://127.0.0.1:9/hook' })
    expect(res.status).toBe(422)
    expect(res.body.field_errors.url).toContain('loopback')
    expect((await api('GET', `/webhooks/${created.body.id}`)).body.url).toBe('https://93.184.215.14/hook')
    expect((await api('DELETE', `/webhooks/${created.body.id}`)).status).toBe(200)
  })

  it('refuses at delivery, before connecting, an endpoint whose address became private (a name resolving to loopback, a private IP)', async () => {
    const ids: string[] = []
    for (const url of [receiver.url('/by-name').replace('127.0.0.1', 'localhost'), 'http://10.0.0.1:9/hook']) {
      const id = randomUUID()
      ids.push(id)
      // As if the name resolved to a public address when the endpoint was created.
      await app.services.pool.query(
        `insert into webhook_endpoint (id, account_id, url, events, secret) values ($1, $2, $3, '{swap.confirmed}', 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw')`,
        [id, accountId, url],
      )
      expect((await api('POST', `/webhooks/${id}/test`)).status).toBe(202)
    }
    for (const id of ids) {
      await waitFor(async () => (await api('GET', `/webhooks/${id}/deliveries`)).body.deliveries[0]?.status === 'failed')
      const [d] = (await api('GET', `/webhooks/${id}/deliveries`)).body.deliveries
      expect(d).toMatchObject({ attempts: 1, lastStatusCode: null })
      expect(d.lastError).toMatch(/^target refused: .*(loopback|private)/)
    }
    expect(receiver.received).toHaveLength(0)
  })
})

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type Api, type TestApp } from './support/app.ts'
import { readSse } from './support/sse.ts'
import { startReceiver } from './support/webhookReceiver.ts'
import { waitFor } from './support/waitFor.ts'

let app: TestApp
let api: Api
let apiKey: string
let receiver: Awaited<ReturnType<typeof startReceiver>>

beforeAll(async () => {
  app = await startTestApp({ WEBHOOK_POLL_MS: '50' })
  ;({ api, apiKey } = await app.account())
  receiver = await startReceiver()
})
afterAll(async () => {
  await receiver?.close()
  await app?.close()
})

/** Listing an agent on the market pauses it (reason `listed`). */
const pause = async (agentId: string, as: Api = api) => expect((await as('POST', '/market', { agentId, priceCredits: 100 })).status).toBe(201)

describe('GET /events', () => {
  it('streams the account\'s events with their ids, the same ones the webhooks carry, and resumes after Last-Event-ID', async () => {
    const hook = await api('POST', '/webhooks', { url: receiver.url(), events: ['agent.paused'] })
    receiver.trust(hook.body.secret)
    const a = (await api('POST', '/agents', { name: 'one', model: 'gpt-4o-mini', skills: [] })).body
    const b = (await api('POST', '/agents', { name: 'two', model: 'gpt-4o-mini', skills: [] })).body
    await pause(a.id)
    await waitFor(async () => (await app.services.pool.query(`select 1 from account_event where resource_id = $1 and fanned_out_at is not null`, [a.id])).rowCount === 1)
    const { rows } = await app.services.pool.query(`select id from account_event where resource_id = $1`, [a.id])
    const first = rows[0]!.id as string
    expect(first).toMatch(/^evt_[0-9a-f]{32}$/)

    // Resumed after the first event, the stream then waits: the second comes live.
    const stream = readSse(`${app.url}/api/v1/events`, { apiKey, lastEventId: first, stopAfter: 1 })
    await pause(b.id)
    const { status, events } = await stream
    expect(status).toBe(200)
    expect(events).toHaveLength(1)
    expect(events[0]!.event).toBe('agent.paused')
    expect(events[0]!.id).toMatch(/^evt_/)
    expect(events[0]!.data).toMatchObject({ type: 'agent.paused', timestamp: expect.any(String), data: { id: b.id, status: 'paused', pausedReason: 'listed' } })

    // Resumed again from the same point (from any node: the stream reads the database): the same event.
    const again = await readSse(`${app.url}/api/v1/events`, { apiKey, lastEventId: first, stopAfter: 1 })
    expect(again.events).toEqual(events)

    // The webhook carried both events, the second with the same data.
    await waitFor(() => receiver.ofType('agent.paused').length === 2)
    expect(receiver.ofType('agent.paused').map((r) => r.payload.data.id).sort()).toEqual([a.id, b.id].sort())
    expect(receiver.ofType('agent.paused').find((r) => r.payload.data.id === b.id)!.payload).toEqual(events[0]!.data)
  })

  it('needs a key; another account resuming from an event id of this one gets none of its events', async () => {
    expect((await readSse(`${app.url}/api/v1/events`, { apiKey: 'cpk_nope' })).status).toBe(401)
    const { rows } = await app.services.pool.query(`select id from account_event order by seq limit 1`)
    const other = await app.account({ name: 'other' })
    const c = (await other.api('POST', '/agents', { name: 'three', model: 'gpt-4o-mini', skills: [] })).body
    const stream = readSse(`${app.url}/api/v1/events`, { apiKey: other.apiKey, lastEventId: rows[0]!.id, stopAfter: 1 })
    await pause(c.id, other.api)
    const { events } = await stream
    expect(events.map((e) => e.data.data.id)).toEqual([c.id])
  })
})

describe('market.listing.sold', () => {
  it('tells the seller, once, when a listing is bought', async () => {
    const seller = await app.account({ name: 'seller' })
    const buyer = await app.account({ name: 'buyer' })
    const hook = await seller.api('POST', '/webhooks', { url: receiver.url('/seller'), events: ['market.listing.sold'] })
    receiver.trust(hook.body.secret)
    const agent = (await seller.api('POST', '/agents', { name: 'for sale', model: 'gpt-4o-mini', skills: [] })).body
    const listing = (await seller.api('POST', '/market', { agentId: agent.id, priceCredits: 100 })).body
    expect((await buyer.api('POST', `/market/${listing.id}/buy`)).status).toBe(200)
    await waitFor(() => receiver.ofType('market.listing.sold').length === 1)
    expect(receiver.ofType('market.listing.sold')[0]!.payload.data).toMatchObject({ id: listing.id, agentId: agent.id, status: 'sold', priceCredits: 100 })
  })
})

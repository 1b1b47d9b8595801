import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { apiClient, startTestApp, type Api, type TestApp } from './support/app.ts'

/**
 * Every market route and tool with another account's key, as docs/api.md (Market) says: the
 * listings are public; cancel, accept, reject and withdraw of another's are 404; buying or bidding
 * on one's own is 422; bid lists and history show only one's own; and nothing changes.
 */
let app: TestApp
type Who = { accountId: string; apiKey: string; api: Api }
let seller: Who
let bidder: Who
let stranger: Who

beforeAll(async () => {
  app = await startTestApp({ STARTER_CREDITS: '10000' })
  seller = await app.account({ name: 'bola seller' })
  bidder = await app.account({ name: 'bola bidder' })
  stranger = await app.account({ name: 'bola stranger' })
})
afterAll(async () => {
  await app?.close()
})

/** What a refused call must not change: the listings, the bids, the balances and reservations, the ledger. */
async function marketState() {
  const q = async (sql: string) => (await app.services.pool.query(sql)).rows
  return {
    listings: await q('select id, status, buyer_account_id from listing order by id'),
    bids: await q('select id, status from listing_bid order by id'),
    accounts: await q('select id, credits::text, credits_held(id)::text as credits_reserved from account order by id'),
    entries: await q('select count(*)::int as n from credit_entry'),
    agents: await q('select id, account_id from agent order by id'),
  }
}

const ids = (rows: Array<{ id: string }>) => rows.map((r) => r.id)

describe("the market's routes with another account's key", () => {
  it('behave as documented and change nothing', async () => {
    const agent = (await seller.api('POST', '/agents', { name: 'bola', model: 'gpt-4o-mini', skills: ['trading'], system_prompt: 'private prompt' })).body
    const listing = (await seller.api('POST', '/market', { agentId: agent.id, priceCredits: 900 })).body
    const bid = (await bidder.api('POST', `/market/${listing.id}/bids`, { credits: 400 })).body
    expect(bid.status).toBe('active')
    const strangerAgent = (await stranger.api('POST', '/agents', { name: 'theirs', model: 'gpt-4o-mini', skills: ['trading'] })).body
    const strangerListing = (await stranger.api('POST', '/market', { agentId: strangerAgent.id, priceCredits: 50 })).body
    const before = await marketState()

    // Public: any key (or none) reads the listings, never a secret.
    for (const api of [stranger.api, apiClient(`${app.url}/api/v1`)]) {
      const all = await api('GET', '/market')
      expect(all.status).toBe(200)
      expect(ids(all.body.listings)).toEqual(expect.arrayContaining([listing.id, strangerListing.id]))
      const one = await api('GET', `/market/${listing.id}`)
      expect({ status: one.status, id: one.body.id }).toEqual({ status: 200, id: listing.id })
      expect(JSON.stringify(one.body)).not.toContain('private prompt')
    }
    const refusals: Array<[Who, string, string, unknown, number, string]> = [
      [stranger, 'POST', '/market', { agentId: agent.id, priceCredits: 1 }, 404, 'not_found'],
      [stranger, 'DELETE', `/market/${listing.id}`, undefined, 404, 'not_found'],
      [bidder, 'DELETE', `/market/${listing.id}`, undefined, 404, 'not_found'],
      [seller, 'POST', `/market/${listing.id}/buy`, undefined, 422, 'validation_failed'],
      [seller, 'POST', `/market/${listing.id}/bids`, { credits: 10 }, 422, 'validation_failed'],
      [stranger, 'POST', `/market/bids/${bid.id}/accept`, undefined, 404, 'not_found'],
      [bidder, 'POST', `/market/bids/${bid.id}/accept`, undefined, 404, 'not_found'],
      [stranger, 'POST', `/market/bids/${bid.id}/reject`, undefined, 404, 'not_found'],
      [bidder, 'POST', `/market/bids/${bid.id}/reject`, undefined, 404, 'not_found'],
      [stranger, 'DELETE', `/market/bids/${bid.id}`, undefined, 404, 'not_found'],
      [seller, 'DELETE', `/market/bids/${bid.id}`, undefined, 404, 'not_found'],
      [stranger, 'POST', `/market/bids/${crypto.randomUUID()}/accept`, undefined, 404, 'not_found'],
      [stranger, 'POST', '/market/bids/not-a-uuid/reject', undefined, 404, 'not_found'],
    ]
    for (const [who, method, path, body, status, code] of refusals) {
      const res = await who.api(method, path, body)
      expect({ who: who.accountId, method, path, status: res.status, code: res.body.code }).toEqual({ who: who.accountId, method, path, status, code })
    }

    // Lists: only one's own.
    expect(ids((await stranger.api('GET', '/market/bids')).body.bids)).toEqual([])
    expect(ids((await stranger.api('GET', '/market/bids/received')).body.bids)).toEqual([])
    expect(ids((await bidder.api('GET', '/market/bids')).body.bids)).toEqual([bid.id])
    expect(ids((await bidder.api('GET', '/market/bids/received')).body.bids)).toEqual([])
    expect(ids((await seller.api('GET', '/market/bids')).body.bids)).toEqual([])
    expect(ids((await seller.api('GET', '/market/bids/received')).body.bids)).toEqual([bid.id])
    expect(ids((await stranger.api('GET', '/market/history')).body.listings)).toEqual([strangerListing.id])
    expect(ids((await bidder.api('GET', '/market/history')).body.listings)).toEqual([])
    expect(ids((await seller.api('GET', '/market/history')).body.listings)).toEqual([listing.id])
    expect(await marketState()).toEqual(before)

    // The MCP tools answer the same.
    const call = async (who: Who, name: string, args: Record<string, unknown> = {}) => (await apiClient(`${app.url}/api`, who.apiKey)('POST', '/mcp/call', { name, arguments: args })).body
    const toolRefusals: Array<[Who, string, Record<string, unknown>, string]> = [
      [stranger, 'create_marketplace_listing', { agent_id: agent.id, price_credits: 1 }, 'not_found'],
      [stranger, 'delist_marketplace_listing', { listing_id: listing.id }, 'not_found'],
      [stranger, 'accept_marketplace_bid', { bid_id: bid.id, confirm: true }, 'not_found'],
      [bidder, 'accept_marketplace_bid', { bid_id: bid.id, confirm: true }, 'not_found'],
      [stranger, 'reject_marketplace_bid', { bid_id: bid.id }, 'not_found'],
      [bidder, 'reject_marketplace_bid', { bid_id: bid.id }, 'not_found'],
      [stranger, 'withdraw_marketplace_bid', { bid_id: bid.id }, 'not_found'],
      [seller, 'withdraw_marketplace_bid', { bid_id: bid.id }, 'not_found'],
      [seller, 'place_bid', { listing_id: listing.id, credits: 10, confirm: true }, 'validation_failed'],
    ]
    for (const [who, name, args, code] of toolRefusals) expect({ name, code: (await call(who, name, args)).code }).toEqual({ name, code })
    // accept_marketplace_bid's preview (no confirm) shows another's bid as none.
    expect((await call(stranger, 'accept_marketplace_bid', { bid_id: bid.id })).result).toEqual({ bid: null })
    expect(ids((await call(stranger, 'browse_marketplace')).result.listings)).toEqual(expect.arrayContaining([listing.id, strangerListing.id]))
    expect(ids((await call(stranger, 'get_my_bids')).result.bids)).toEqual([])
    expect(ids((await call(stranger, 'get_received_bids')).result.bids)).toEqual([])
    expect(ids((await call(bidder, 'get_my_bids')).result.bids)).toEqual([bid.id])
    expect(ids((await call(seller, 'get_received_bids')).result.bids)).toEqual([bid.id])
    expect(ids((await call(stranger, 'get_marketplace_history')).result.listings)).toEqual([strangerListing.id])
    expect(ids((await call(bidder, 'get_marketplace_history')).result.listings)).toEqual([])
    expect(await marketState()).toEqual(before)

    // Their owners can: the bidder withdraws, the seller and the stranger cancel; the bidder's credits are released.
    expect((await bidder.api('DELETE', `/market/bids/${bid.id}`)).body.status).toBe('withdrawn')
    expect((await seller.api('DELETE', `/market/${listing.id}`)).body.status).toBe('cancelled')
    expect((await stranger.api('DELETE', `/market/${strangerListing.id}`)).body.status).toBe('cancelled')
    expect((await bidder.api('GET', '/billing')).body).toMatchObject({ credits: 10000, reserved: 0 })
  })
})

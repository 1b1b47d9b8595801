import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { apiClient, startTestApp, type Api, type TestApp } from './support/app.ts'
import { startModelServer, type ModelServer } from './support/modelServer.ts'

let app: TestApp
let model: ModelServer
let seller: { accountId: string; apiKey: string; api: Api }
let other: { accountId: string; apiKey: string; api: Api }
const pub = () => apiClient(`${app.url}/api/v1`)
const friend = '0x00000000000000000000000000000000000f00d1'

/** An agent of `owner` with funds in its wallet. */
async function fundedAgent(owner: Api, name: string) {
  const a = await owner('POST', '/agents', { name, model: 'gpt-4o-mini', skills: ['trading', 'wallet'], strategy: 'momentum', system_prompt: 'secret prompt' })
  expect(a.status).toBe(201)
  await owner('POST', '/dev/faucet', { agentId: a.body.id, eth: '2', usdc: '500' })
  return a.body as { id: string; walletAddress: string }
}

/**
 * Every account's balance equals the sum of its ledger; sales net to zero between accounts; and
 * the balances plus the platform's fees equal what came from outside the market (grants,
 * deposits, less model usage): nothing made or lost.
 */
async function ledgerModelCheck() {
  const { rows: perAccount } = await app.services.pool.query(
    `select a.id, a.credits::bigint as credits, credits_held(a.id)::bigint as reserved, coalesce(sum(e.credits), 0)::bigint as ledger
       from account a left join credit_entry e on e.account_id = a.id group by a.id`,
  )
  for (const r of perAccount) {
    expect(Number(r.credits)).toBe(Number(r.ledger))
    expect(Number(r.reserved)).toBeGreaterThanOrEqual(0)
    expect(Number(r.reserved)).toBeLessThanOrEqual(Number(r.credits))
  }
  const { rows } = await app.services.pool.query(
    `select coalesce(sum(credits) filter (where kind not in ('market_purchase', 'market_sale', 'market_fee')), 0)::bigint as granted,
            coalesce(-sum(credits) filter (where kind = 'market_fee'), 0)::bigint as fees,
            coalesce(sum(credits) filter (where kind = 'market_purchase'), 0)::bigint + coalesce(sum(credits) filter (where kind = 'market_sale'), 0)::bigint as net_sales,
            (select sum(credits) from account)::bigint as balances
       from credit_entry`,
  )
  const r = rows[0]
  expect(Number(r.net_sales)).toBe(0)
  expect(Number(r.balances) + Number(r.fees)).toBe(Number(r.granted))
}

beforeAll(async () => {
  model = await startModelServer()
  app = await startTestApp({ STARTER_CREDITS: '10000', OPENAI_BASE_URL: model.baseUrl, OPENAI_API_KEY: 'test-key' }, { withChain: true })
  seller = await app.account({ name: 'Seller Co' })
  other = await app.account({ name: 'other' })
})
afterAll(async () => {
  await app?.close()
  await model?.stop()
})

describe('listing, browsing and cancelling', () => {
  it('lists an agent (201), pauses it with reason listed, and shows a public card with no secrets', async () => {
    const agent = await fundedAgent(seller.api, 'Momo')
    await seller.api('POST', `/agents/${agent.id}/whitelist`, { address: friend })
    const res = await seller.api('POST', '/market', { agentId: agent.id, priceCredits: 1500, description: 'A momentum trader' })
    expect(res.status).toBe(201)
    expect(res.body).toMatchObject({
      id: expect.any(String), agentId: agent.id, status: 'active', priceCredits: 1500, description: 'A momentum trader',
      seller: { name: 'Seller Co' },
      agent: { name: 'Momo', strategy: 'momentum', model: 'gpt-4o-mini', skills: ['trading', 'wallet'], walletAddress: agent.walletAddress, launches: 0,
        pnl: { costBasisUsd: expect.any(String), realisedUsd: expect.any(String), unrealisedUsd: expect.any(String), note: expect.any(String) }, createdAt: expect.any(String) },
      createdAt: expect.any(String), meta: { requestId: expect.any(String) },
    })
    expect(Number(res.body.agent.portfolioValueUsd)).toBeGreaterThan(500)
    const status = await seller.api('GET', `/agents/${agent.id}`)
    expect(status.body).toMatchObject({ status: 'paused', statusReason: 'listed' })

    const one = await pub()('GET', `/market/${res.body.id}`)
    expect(one.status).toBe(200)
    expect(one.body.id).toBe(res.body.id)
    const text = JSON.stringify(one.body)
    for (const secret of ['secret prompt', 'systemPrompt', 'policy', 'whitelist', 'payout', friend.slice(2), 'Key']) expect(text).not.toContain(secret)
    const list = await pub()('GET', '/market')
    expect(list.status).toBe(200)
    expect(list.body.listings.map((l: { id: string }) => l.id)).toContain(res.body.id)

    const again = await seller.api('POST', '/market', { agentId: agent.id, priceCredits: 10 })
    expect(again.status).toBe(409)
    expect(again.body.code).toBe('invalid_state')
    expect((await other.api('POST', '/market', { agentId: agent.id, priceCredits: 10 })).status).toBe(404)
    const cancel = await seller.api('DELETE', `/market/${res.body.id}`)
    expect(cancel.status).toBe(200)
    expect(cancel.body.status).toBe('cancelled')
  })

  it('pages and sorts active listings by price or newest, with a price ceiling', async () => {
    const prices = [300, 100, 200]
    const ids: string[] = []
    for (const [i, p] of prices.entries()) {
      const a = await seller.api('POST', '/agents', { name: `cheap-${i}`, model: 'gpt-4o-mini', skills: ['trading'] })
      ids.push((await seller.api('POST', '/market', { agentId: a.body.id, priceCredits: p })).body.id)
    }
    const byPrice = await pub()('GET', '/market?sort=price&maxPriceCredits=300&limit=2')
    expect(byPrice.body.listings.map((l: { priceCredits: number }) => l.priceCredits)).toEqual([100, 200])
    const next = await pub()('GET', `/market?sort=price&maxPriceCredits=300&limit=2&cursor=${byPrice.body.nextCursor}`)
    expect(next.body.listings.map((l: { priceCredits: number }) => l.priceCredits)).toEqual([300])
    expect(next.body.nextCursor).toBeNull()
    const newest = await pub()('GET', '/market?maxPriceCredits=300')
    expect(newest.body.listings.map((l: { id: string }) => l.id)).toEqual([...ids].reverse())
    expect((await pub()('GET', '/market?sort=cheap')).status).toBe(422)
    // A cursor of one order is not one of the other's.
    const timeCursor = (await pub()('GET', '/market?maxPriceCredits=300&limit=1')).body.nextCursor
    const mixed = await pub()('GET', `/market?sort=price&cursor=${timeCursor}`)
    expect({ status: mixed.status, cursor: mixed.body.field_errors?.cursor }).toEqual({ status: 422, cursor: 'Invalid cursor.' })
    for (const id of ids) await seller.api('DELETE', `/market/${id}`)
    expect((await pub()('GET', '/market?maxPriceCredits=300')).body.listings).toEqual([])
  })

  it('refuses a deleted agent, and another account cancelling (404)', async () => {
    const a = await seller.api('POST', '/agents', { name: 'gone', model: 'gpt-4o-mini', skills: ['trading'] })
    await seller.api('DELETE', `/agents/${a.body.id}`)
    const res = await seller.api('POST', '/market', { agentId: a.body.id, priceCredits: 10 })
    expect(res.status).toBe(409)
    expect(res.body.code).toBe('invalid_state')
    const b = await seller.api('POST', '/agents', { name: 'kept', model: 'gpt-4o-mini', skills: ['trading'] })
    const l = await seller.api('POST', '/market', { agentId: b.body.id, priceCredits: 10 })
    expect((await other.api('DELETE', `/market/${l.body.id}`)).status).toBe(404)
    expect((await other.api('DELETE', `/market/not-a-uuid`)).status).toBe(404)
    expect((await seller.api('DELETE', `/market/${l.body.id}`)).body.status).toBe('cancelled')
    const twice = await seller.api('DELETE', `/market/${l.body.id}`)
    expect(twice.status).toBe(409)
    expect(twice.body.code).toBe('listing_unavailable')
    expect((await pub()('GET', `/market/${crypto.randomUUID()}`)).status).toBe(404)
  })
})

describe('a listed agent refuses every fund-moving call; a cancel restores it', () => {
  it('refuses swaps, transfers, claims, launches, runs, starts and MCP calls with 409 naming the listing', async () => {
    const agent = await fundedAgent(seller.api, 'Frozen')
    await seller.api('POST', `/agents/${agent.id}/whitelist`, { address: friend })
    const listing = (await seller.api('POST', '/market', { agentId: agent.id, priceCredits: 700 })).body
    const calls: [string, string, unknown, Record<string, string>?][] = [
      ['POST', '/swap/execute', { agentId: agent.id, tokenIn: 'USDC', tokenOut: 'ETH', amountIn: '1', slippageBps: 100 }],
      ['POST', '/wallet/transfer', { agentId: agent.id, to: friend, token: 'USDC', amount: '1' }],
      ['POST', '/fees/claim', { agentId: agent.id }],
      ['POST', '/launch/venue-a', { agentId: agent.id, symbol: 'FRZ', name: 'Frozen', description: 'x', logoUrl: 'https://example.com/x.png', quote: 'ETH' }, { 'idempotency-key': 'frz-1' }],
      ['POST', `/agents/${agent.id}/runs`, { goal: 'trade' }],
      ['POST', `/agents/${agent.id}/start`, undefined],
    ]
    for (const [method, path, body, headers] of calls) {
      const res = await seller.api(method, path, body, headers)
      expect({ path, status: res.status, code: res.body.code }).toEqual({ path, status: 409, code: 'invalid_state' })
      expect(res.body.error).toContain(listing.id)
    }
    const mcp = apiClient(`${app.url}/api`, seller.apiKey)
    for (const [name, args] of [
      ['swap_execute', { agent_id: agent.id, tokenIn: 'USDC', tokenOut: 'ETH', amountIn: '1', slippageBps: 100, confirm: true }],
      ['wallet_transfer', { agent_id: agent.id, to: friend, token: 'USDC', amount: '1', confirm: true }],
    ] as const) {
      const res = await mcp('POST', '/mcp/call', { name, arguments: args })
      expect({ name, code: res.body.code }).toEqual({ name, code: 'invalid_state' })
    }
    // A chat tool: the model asks for a swap, the tool answers the refusal (chat itself still works).
    model.mock.on({ userMessage: 'sell it all', hasToolResult: false }, { toolCalls: [{ id: 'call_sell', name: 'swap_execute', arguments: '{"tokenIn":"USDC","tokenOut":"ETH","amountIn":"1"}' }] })
    model.mock.onToolResult('call_sell', { content: 'The agent is listed; nothing moved.' })
    const chat = await seller.api('POST', `/agents/${agent.id}/chat`, { message: 'sell it all' })
    expect(chat.status).toBe(200)
    expect(chat.body.toolCalls).toMatchObject([{ id: 'call_sell', status: 'refused', result: { code: 'invalid_state' } }])
    const { rows } = await app.services.pool.query('select count(*)::int as n from wallet_op where agent_id = $1', [agent.id])
    expect(rows[0].n).toBe(0)

    // The database refuses a money move recorded for a listed agent, whoever skipped the check.
    await expect(
      app.services.pool.query(`insert into wallet_op (id, account_id, agent_id, kind) values ('x-1', $1, $2, 'swap')`, [seller.accountId, agent.id]),
    ).rejects.toMatchObject({ code: 'ML409' })

    expect((await seller.api('DELETE', `/market/${listing.id}`)).status).toBe(200)
    expect((await seller.api('GET', `/agents/${agent.id}`)).body).toMatchObject({ status: 'stopped', statusReason: null })
    const moved = await seller.api('POST', '/wallet/transfer', { agentId: agent.id, to: friend, token: 'USDC', amount: '1' })
    expect(moved.body.status).toBe('confirmed')
  })

  it('a transfer that read the agent before the listing committed is refused when it records its move', async () => {
    const agent = await fundedAgent(seller.api, 'Racer')
    await seller.api('POST', `/agents/${agent.id}/whitelist`, { address: friend })
    // Hold the agent's lock (the one a money move records itself under) so the transfer stops there.
    const lock = await app.services.pool.connect()
    await lock.query('select pg_advisory_lock(hashtext($1))', [agent.id])
    const transfer = seller.api('POST', '/wallet/transfer', { agentId: agent.id, to: friend, token: 'USDC', amount: '1' })
    const deadline = Date.now() + 20_000
    for (;;) {
      const { rows } = await app.services.pool.query(`select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and query like 'select pg_advisory_xact_lock%'`)
      if (rows[0].n === 1) break
      if (Date.now() > deadline) throw new Error('the transfer never reached the lock')
      await new Promise((r) => setTimeout(r, 20))
    }
    // Meanwhile the listing commits (written as POST /market writes it; the route itself would wait on the same lock).
    const listingId = crypto.randomUUID()
    await lock.query('insert into listing (id, agent_id, seller_account_id, price_credits) values ($1, $2, $3, 100)', [listingId, agent.id, seller.accountId])
    await lock.query('select pg_advisory_unlock(hashtext($1))', [agent.id])
    lock.release()
    const res = await transfer
    expect({ status: res.status, code: res.body.code }).toEqual({ status: 409, code: 'invalid_state' })
    expect(res.body.error).toContain(listingId)
    const { rows } = await app.services.pool.query('select count(*)::int as n from wallet_op where agent_id = $1', [agent.id])
    expect(rows[0].n).toBe(0)
    await app.services.pool.query(`update listing set status = 'cancelled' where id = $1`, [listingId])
  })
})

describe('buying', () => {
  it('20 concurrent buyers: exactly one wins, the agent and its wallet move, every other ledger is unchanged', async () => {
    const agent = await fundedAgent(seller.api, 'Prize')
    await seller.api('POST', `/agents/${agent.id}/whitelist`, { address: friend })
    await seller.api('PATCH', `/agents/${agent.id}`, { payout_wallet: friend })
    // The seller's chat history with it (written as a turn writes it).
    await app.services.pool.query(
      `insert into chat_message (id, account_id, agent_id, turn_id, key, role, content) values ($1, $2, $3, $4, 'u', 'user', 'my secret plan')`,
      [crypto.randomUUID(), seller.accountId, agent.id, crypto.randomUUID()],
    )
    expect((await seller.api('GET', `/agents/${agent.id}/messages`)).body.messages).toHaveLength(1)
    const listing = (await seller.api('POST', '/market', { agentId: agent.id, priceCredits: 2000 })).body
    const listedHoldings = (await seller.api('GET', `/wallet/portfolio?agentId=${agent.id}`)).body.holdings
    const buyers = await Promise.all(Array.from({ length: 20 }, (_, i) => app.account({ name: `buyer-${i}` })))
    const sellerBefore = (await seller.api('GET', '/billing')).body.credits

    const answers = await Promise.all(buyers.map((b) => b.api('POST', `/market/${listing.id}/buy`)))
    const won = answers.flatMap((a, i) => (a.status === 200 ? [i] : []))
    expect(won).toHaveLength(1)
    for (const a of answers.filter((x) => x.status !== 200)) expect({ status: a.status, code: a.body.code }).toEqual({ status: 409, code: 'listing_unavailable' })
    const winner = buyers[won[0]!]!
    expect(answers[won[0]!]!.body).toMatchObject({ id: listing.id, status: 'sold', agentId: agent.id })

    for (const [i, b] of buyers.entries()) expect((await b.api('GET', '/billing')).body.credits).toBe(i === won[0] ? 10000 - 2000 : 10000)
    expect((await seller.api('GET', '/billing')).body.credits).toBe(sellerBefore + 2000 - 100)
    const { rows: owners } = await app.services.pool.query('select a.account_id, x.account_id as actor_account, x.status from agent a join actor x on x.id = a.id::text where a.id = $1', [agent.id])
    expect(owners[0]).toEqual({ account_id: winner.accountId, actor_account: winner.accountId, status: 'stopped' })
    await ledgerModelCheck()

    // The buyer: the agent stopped, with the wallet and holdings listed, and none of the seller's set-up.
    const got = await winner.api('GET', `/agents/${agent.id}`)
    expect(got.body).toMatchObject({ id: agent.id, status: 'stopped', walletAddress: agent.walletAddress, payoutWallet: null })
    expect((await winner.api('GET', `/agents/${agent.id}/whitelist`)).body.whitelist ?? (await winner.api('GET', `/agents/${agent.id}/whitelist`)).body.entries).toEqual([])
    expect((await winner.api('GET', `/agents/${agent.id}/messages`)).body.messages).toEqual([])
    const holdings = (await winner.api('GET', `/wallet/portfolio?agentId=${agent.id}`)).body.holdings
    expect(holdings.map((h: { symbol: string; balance: string }) => [h.symbol, h.balance])).toEqual(listedHoldings.map((h: { symbol: string; balance: string }) => [h.symbol, h.balance]))
    expect((await winner.api('POST', `/agents/${agent.id}/start`)).body.status).toBe('running')
    expect((await winner.api('POST', `/agents/${agent.id}/stop`)).body.status).toBe('stopped')

    // The seller has lost it at once: read, start, trade, chat, transfer are all 404.
    for (const [method, path, body] of [
      ['GET', `/agents/${agent.id}`, undefined],
      ['POST', `/agents/${agent.id}/start`, undefined],
      ['POST', `/agents/${agent.id}/chat`, { message: 'hi' }],
      ['POST', '/wallet/transfer', { agentId: agent.id, to: friend, token: 'USDC', amount: '1' }],
      ['GET', `/wallet/portfolio?agentId=${agent.id}`, undefined],
    ] as const) {
      const res = await seller.api(method, path, body)
      expect({ path, status: res.status }).toEqual({ path, status: 404 })
    }
    // A swap names its agent in the body: as for any agent not of the account, a 422 on agentId.
    const swap = await seller.api('POST', '/swap/execute', { agentId: agent.id, tokenIn: 'USDC', tokenOut: 'ETH', amountIn: '1', slippageBps: 100 })
    expect({ status: swap.status, agentId: swap.body.field_errors?.agentId }).toEqual({ status: 422, agentId: 'No such agent in this account.' })
    // ...and a move recorded for the former owner is refused by the database too.
    await expect(
      app.services.pool.query(`insert into wallet_op (id, account_id, agent_id, kind) values ('x-2', $1, $2, 'swap')`, [seller.accountId, agent.id]),
    ).rejects.toMatchObject({ code: 'ML404' })
    const mcp = await apiClient(`${app.url}/api`, seller.apiKey)('POST', '/mcp/call', { name: 'get_agent', arguments: { agent_id: agent.id } })
    expect(mcp.body.code).toBe('not_found')

    // A retry by the winner with its Idempotency-Key... and without: the sold listing again, nothing charged twice.
    const retry = await winner.api('POST', `/market/${listing.id}/buy`)
    expect(retry.body.status).toBe('sold')
    expect((await winner.api('GET', '/billing')).body.credits).toBe(8000)
    const history = await seller.api('GET', '/market/history')
    expect(history.body.listings.find((l: { id: string }) => l.id === listing.id)).toMatchObject({ role: 'seller', status: 'sold', saleCredits: 2000, feeCredits: 100 })
  })

  it('one own listing is 422, too few credits 402 with nothing changed, an unknown listing 404', async () => {
    const a = await seller.api('POST', '/agents', { name: 'dear', model: 'gpt-4o-mini', skills: ['trading'] })
    const listing = (await seller.api('POST', '/market', { agentId: a.body.id, priceCredits: 50_000 })).body
    const own = await seller.api('POST', `/market/${listing.id}/buy`)
    expect(own.status).toBe(422)
    const poor = await other.api('POST', `/market/${listing.id}/buy`)
    expect({ status: poor.status, code: poor.body.code }).toEqual({ status: 402, code: 'insufficient_credits' })
    expect((await other.api('GET', '/billing')).body.credits).toBe(10000)
    expect((await pub()('GET', `/market/${listing.id}`)).body.status).toBe('active')
    expect((await other.api('POST', `/market/${crypto.randomUUID()}/buy`)).status).toBe(404)
    await ledgerModelCheck()
    await seller.api('DELETE', `/market/${listing.id}`)

    // Idempotency-Key: the same key again replays the sale, nothing is charged twice.
    const b = await seller.api('POST', '/agents', { name: 'cheap', model: 'gpt-4o-mini', skills: ['trading'] })
    const cheap = (await seller.api('POST', '/market', { agentId: b.body.id, priceCredits: 40 })).body
    const first = await other.api('POST', `/market/${cheap.id}/buy`, undefined, { 'idempotency-key': 'buy-cheap' })
    const replay = await other.api('POST', `/market/${cheap.id}/buy`, undefined, { 'idempotency-key': 'buy-cheap' })
    expect(first.status).toBe(200)
    expect(replay.headers.get('idempotent-replayed')).toBe('true')
    expect(replay.body.id).toBe(first.body.id)
    expect((await other.api('GET', '/billing')).body.credits).toBe(10000 - 40)
    await ledgerModelCheck()
  })
})

describe('bids', () => {
  it('a bid reserves credits; withdraw and reject release them; accepting settles as a buy; the rest expire', async () => {
    const agent = await fundedAgent(seller.api, 'Bidded')
    const listing = (await seller.api('POST', '/market', { agentId: agent.id, priceCredits: 5000 })).body
    const [b1, b2, b3] = await Promise.all([1, 2, 3].map((i) => app.account({ name: `bidder-${i}` })))
    const own = await seller.api('POST', `/market/${listing.id}/bids`, { credits: 10 })
    expect(own.status).toBe(422)
    const bid1 = (await b1!.api('POST', `/market/${listing.id}/bids`, { credits: 1000 })).body
    const bid2 = (await b2!.api('POST', `/market/${listing.id}/bids`, { credits: 2000 })).body
    const bid3 = (await b3!.api('POST', `/market/${listing.id}/bids`, { credits: 3000 })).body
    expect(bid1).toMatchObject({ listingId: listing.id, credits: 1000, status: 'active' })
    expect((await b1!.api('POST', `/market/${listing.id}/bids`, { credits: 99_999 })).status).toBe(402)
    expect((await b1!.api('GET', '/billing')).body).toMatchObject({ credits: 10000 })
    const { rows } = await app.services.pool.query('select credits_held(id)::int as r from account where id = $1', [b1!.accountId])
    expect(rows[0].r).toBe(1000)
    expect((await b1!.api('GET', '/market/bids')).body.bids.map((b: { id: string }) => b.id)).toEqual([bid1.id])
    expect((await seller.api('GET', '/market/bids/received')).body.bids.map((b: { id: string }) => b.id)).toEqual([bid3.id, bid2.id, bid1.id])

    // BOLA: only the bidder withdraws, only the seller accepts or rejects.
    expect((await b2!.api('DELETE', `/market/bids/${bid1.id}`)).status).toBe(404)
    expect((await b1!.api('POST', `/market/bids/${bid1.id}/accept`)).status).toBe(404)
    expect((await other.api('POST', `/market/bids/${bid1.id}/reject`)).status).toBe(404)

    expect((await b1!.api('DELETE', `/market/bids/${bid1.id}`)).body.status).toBe('withdrawn')
    expect((await seller.api('POST', `/market/bids/${bid2.id}/reject`)).body.status).toBe('rejected')
    const { rows: released } = await app.services.pool.query('select credits_held(id)::int as r from account where id = any($1::uuid[]) order by id', [[b1!.accountId, b2!.accountId]])
    expect(released.map((r) => r.r)).toEqual([0, 0])
    const bid4 = (await b1!.api('POST', `/market/${listing.id}/bids`, { credits: 500 })).body

    const sold = await seller.api('POST', `/market/bids/${bid3.id}/accept`)
    expect(sold.status).toBe(200)
    expect(sold.body).toMatchObject({ status: 'sold', agentId: agent.id })
    expect((await b3!.api('GET', '/billing')).body.credits).toBe(7000)
    expect((await b3!.api('GET', `/agents/${agent.id}`)).body.status).toBe('stopped')
    const { rows: after } = await app.services.pool.query(
      'select id, status from listing_bid where id = any($1::uuid[]) order by created_at', [[bid1.id, bid2.id, bid3.id, bid4.id]],
    )
    expect(after.map((r) => r.status)).toEqual(['withdrawn', 'rejected', 'accepted', 'expired'])
    const { rows: reserved } = await app.services.pool.query('select coalesce(sum(credits_held(id)), 0)::int as r from account where id = any($1::uuid[])', [[b1!.accountId, b2!.accountId, b3!.accountId]])
    expect(reserved[0].r).toBe(0)
    expect((await seller.api('POST', `/market/bids/${bid3.id}/accept`)).body.status).toBe('sold')
    expect((await b2!.api('POST', `/market/${listing.id}/bids`, { credits: 10 })).body.code).toBe('listing_unavailable')
    await ledgerModelCheck()
  })
})

describe('MCP tools (the reference catalogue names)', () => {
  it('lists, browses, bids (preview, then confirmed), accepts and delists over /api/mcp/call', async () => {
    const call = (key: string, name: string, args: Record<string, unknown> = {}) => apiClient(`${app.url}/api`, key)('POST', '/mcp/call', { name, arguments: args })
    const tools = (await apiClient(`${app.url}/api`, seller.apiKey)('GET', '/mcp/tools')).body.tools.map((t: { name: string }) => t.name)
    for (const name of ['browse_marketplace', 'create_marketplace_listing', 'delist_marketplace_listing', 'get_marketplace_history', 'place_bid',
      'get_my_bids', 'get_received_bids', 'accept_marketplace_bid', 'reject_marketplace_bid', 'withdraw_marketplace_bid']) expect(tools).toContain(name)

    const agent = await fundedAgent(seller.api, 'Via MCP')
    const listed = await call(seller.apiKey, 'create_marketplace_listing', { agent_id: agent.id, price_credits: 4000 })
    expect(listed.body.result).toMatchObject({ agentId: agent.id, status: 'active', priceCredits: 4000 })
    const listingId = listed.body.result.id
    const browse = await call(other.apiKey, 'browse_marketplace', { sort: 'price' })
    expect(browse.body.result.listings.map((l: { id: string }) => l.id)).toContain(listingId)

    const bidder = await app.account({ name: 'mcp bidder' })
    const preview = await call(bidder.apiKey, 'place_bid', { listing_id: listingId, credits: 1200 })
    expect(preview.body.result).toMatchObject({ listing: { id: listingId }, reserve: 1200 })
    expect((await bidder.api('GET', '/market/bids')).body.bids).toEqual([])
    const bid = await call(bidder.apiKey, 'place_bid', { listing_id: listingId, credits: 1200, confirm: true, idempotencyKey: 'bid-1' })
    expect(bid.body.result).toMatchObject({ listingId, credits: 1200, status: 'active' })
    expect((await call(bidder.apiKey, 'get_my_bids')).body.result.bids.map((b: { id: string }) => b.id)).toEqual([bid.body.result.id])
    expect((await call(seller.apiKey, 'get_received_bids')).body.result.bids.map((b: { id: string }) => b.id)).toContain(bid.body.result.id)

    // Another account's listing or bid: not found.
    expect((await call(other.apiKey, 'delist_marketplace_listing', { listing_id: listingId })).body.code).toBe('not_found')
    expect((await call(other.apiKey, 'accept_marketplace_bid', { bid_id: bid.body.result.id, confirm: true })).body.code).toBe('not_found')
    expect((await call(other.apiKey, 'withdraw_marketplace_bid', { bid_id: bid.body.result.id })).body.code).toBe('not_found')

    const sold = await call(seller.apiKey, 'accept_marketplace_bid', { bid_id: bid.body.result.id, confirm: true })
    expect(sold.body.result).toMatchObject({ id: listingId, status: 'sold' })
    expect((await bidder.api('GET', `/agents/${agent.id}`)).body.status).toBe('stopped')
    const history = await call(bidder.apiKey, 'get_marketplace_history')
    expect(history.body.result.listings[0]).toMatchObject({ id: listingId, role: 'buyer', saleCredits: 1200, feeCredits: 60 })
    await ledgerModelCheck()
  })
})

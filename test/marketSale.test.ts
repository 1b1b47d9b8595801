import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type pg from 'pg'
import { startTestApp, type Api, type ApiResponse, type TestApp } from './support/app.ts'
import { startModelServer, type ModelServer } from './support/modelServer.ts'
import { waitFor } from './support/waitFor.ts'
import { applyGuardrailChange } from '../src/adapters/db/guardrails.store.ts'
import { NotFoundError } from '../src/domain/errors.ts'

/**
 * What must not cross a sale: a write of the seller's that read the agent before the sale and
 * lands after it (whitelist, settings, chat) changes nothing of the buyer's; the buyer's own bid
 * does not block its buy; the card shows PnL, and an ended listing shows the card as it was.
 */
let app: TestApp
let model: ModelServer
let seller: { accountId: string; api: Api }
const friend = '0x00000000000000000000000000000000000f00d1'

beforeAll(async () => {
  model = await startModelServer()
  app = await startTestApp({ STARTER_CREDITS: '10000', OPENAI_BASE_URL: model.baseUrl, OPENAI_API_KEY: 'test-key' }, { withChain: true })
  seller = await app.account({ name: 'seller' })
})
afterAll(async () => {
  await app?.close()
  await model?.stop()
})

async function listed(name: string, priceCredits = 100, { funded = false } = {}) {
  const agent = (await seller.api('POST', '/agents', { name, model: 'gpt-4o-mini', skills: ['trading', 'wallet'], strategy: 'momentum' })).body as { id: string }
  if (funded) await seller.api('POST', '/dev/faucet', { agentId: agent.id, eth: '2', usdc: '500' })
  const listing = await seller.api('POST', '/market', { agentId: agent.id, priceCredits })
  expect(listing.status).toBe(201)
  return { agentId: agent.id, listingId: listing.body.id as string }
}

/** Waits until a statement whose text matches `like` waits on a lock. */
const waitingOnLock = (like: string) =>
  waitFor(async () => (await app.services.pool.query(`select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and query like $1`, [like])).rows[0].n > 0, 20_000)

/**
 * A buy held on the agent's row (this test's transaction locks it, as a slow sale would), while
 * `write` (the seller's, which read the agent before the sale) queues behind it on the same row;
 * then the sale commits first, and the write goes on.
 */
async function saleRacing(listingId: string, agentId: string, buyer: Api, write: () => Promise<ApiResponse>, writeSql: string) {
  const blocker: pg.PoolClient = await app.services.pool.connect()
  await blocker.query('begin')
  await blocker.query('select 1 from agent where id = $1 for update', [agentId])
  const buy = buyer('POST', `/market/${listingId}/buy`)
  await waitingOnLock('select skills from agent%')
  const written = write()
  await waitingOnLock(writeSql)
  await blocker.query('rollback')
  blocker.release()
  expect((await buy).status).toBe(200)
  return written
}

describe("the seller's writes racing the sale", () => {
  it('a whitelist add that read the agent before the sale inserts nothing after it (404)', async () => {
    const { agentId, listingId } = await listed('wl-race')
    const buyer = await app.account({ name: 'wl buyer' })
    const add = await saleRacing(listingId, agentId, buyer.api, () => seller.api('POST', `/agents/${agentId}/whitelist`, { address: friend }), '%agent_whitelist%')
    expect(add.status).toBe(404)
    expect((await buyer.api('GET', `/agents/${agentId}/whitelist`)).body.whitelist).toEqual([])
    // And a remove by the seller never deletes the buyer's entry.
    expect((await buyer.api('POST', `/agents/${agentId}/whitelist`, { address: friend })).status).toBe(201)
    expect((await seller.api('DELETE', `/agents/${agentId}/whitelist`, { address: friend })).status).toBe(404)
    const { rows } = await app.services.pool.query('select count(*)::int as n from agent_whitelist where agent_id = $1', [agentId])
    expect(rows[0].n).toBe(1)
  })

  it('a settings change that read the agent before the sale answers 404 and changes nothing', async () => {
    const { agentId, listingId } = await listed('cfg-race')
    const buyer = await app.account({ name: 'cfg buyer' })
    const patch = await saleRacing(listingId, agentId, buyer.api, () => seller.api('PATCH', `/agents/${agentId}`, { name: 'seller rename', payout_wallet: friend }), 'update agent set%')
    expect({ status: patch.status, code: patch.body.code }).toEqual({ status: 404, code: 'not_found' })
    expect((await buyer.api('GET', `/agents/${agentId}`)).body).toMatchObject({ name: 'cfg-race', payoutWallet: null })
    // The guardrail store on its own, for the sold agent and its former owner: not found, nothing written.
    const change = { agentId, accountId: seller.accountId, actor: { type: 'key' as const, keyId: null }, patch: { payout_wallet: friend }, holdSeconds: 0 }
    await expect(applyGuardrailChange(app.services.pool, change)).rejects.toBeInstanceOf(NotFoundError)
  })

  it("a chat turn of the seller's still running at the sale never reaches the buyer's chat or model", async () => {
    const { agentId, listingId } = await listed('chat-race')
    const buyer = await app.account({ name: 'chat buyer' })
    // The model answers the seller's turn only once the sale committed.
    let answer!: () => void
    const gate = new Promise<void>((r) => (answer = r))
    model.mock.onMessage('seller plan', async () => {
      await gate
      return { content: 'the seller secret answer' }
    })
    const chat = seller.api('POST', `/agents/${agentId}/chat`, { message: 'seller plan' })
    await waitFor(async () => (await app.services.pool.query(`select 1 from chat_message where agent_id = $1 and role = 'user'`, [agentId])).rows.length > 0, 10_000)
    expect((await buyer.api('POST', `/market/${listingId}/buy`)).status).toBe(200)
    answer()
    const turnId = (await chat).body.id as string
    await app.services.runtime.waitFor(turnId, (e) => e.status === 'completed' || e.status === 'failed', 10_000)
    expect((await buyer.api('GET', `/agents/${agentId}/messages`)).body.messages).toEqual([])
    model.mock.onMessage('buyer hello', { content: 'hello buyer' })
    expect((await buyer.api('POST', `/agents/${agentId}/chat`, { message: 'buyer hello' })).status).toBe(200)
    const request = model.mock.getRequests().find((r) => JSON.stringify(r.body).includes('buyer hello'))!
    expect(JSON.stringify(request.body)).not.toContain('seller secret')
    expect((await buyer.api('GET', `/agents/${agentId}/messages`)).body.messages.map((m: { content: string }) => m.content)).toEqual(['hello buyer', 'buyer hello'])
  })
})

describe('buying', () => {
  it('the system prompt, persona, temperature, isPublic and publicDescription move with the agent, as docs/api.md says', async () => {
    const set = { system_prompt: 'buy the dip', persona: 'calm', temperature: 0.3, is_public: true, public_description: 'a dip buyer' }
    const agent = (await seller.api('POST', '/agents', { name: 'moves', model: 'gpt-4o-mini', skills: ['trading'], ...set })).body as { id: string }
    const listing = (await seller.api('POST', '/market', { agentId: agent.id, priceCredits: 10 })).body
    const buyer = await app.account({ name: 'prompt buyer' })
    expect((await buyer.api('POST', `/market/${listing.id}/buy`)).status).toBe(200)
    expect((await buyer.api('GET', `/agents/${agent.id}`)).body).toMatchObject({ systemPrompt: 'buy the dip', persona: 'calm', temperature: 0.3, isPublic: true, publicDescription: 'a dip buyer' })
  })

  it("a buyer's own active bid on the listing does not count against its direct buy", async () => {
    const { agentId, listingId } = await listed('bid-then-buy', 8000)
    const buyer = await app.account({ name: 'bidding buyer' })
    const bid = await buyer.api('POST', `/market/${listingId}/bids`, { credits: 3000 })
    expect(bid.status).toBe(201)
    const buy = await buyer.api('POST', `/market/${listingId}/buy`)
    expect({ status: buy.status, code: buy.body.code }).toEqual({ status: 200, code: undefined })
    expect((await buyer.api('GET', '/billing')).body).toMatchObject({ credits: 2000, reserved: 0 })
    const { rows } = await app.services.pool.query('select status from listing_bid where id = $1', [bid.body.id])
    expect(rows[0].status).toBe('expired')
    expect((await buyer.api('GET', `/agents/${agentId}`)).status).toBe(200)
  })
})

describe('the public card', () => {
  it('shows cost basis, realised and unrealised PnL from the portfolio totals after a swap', async () => {
    const agent = (await seller.api('POST', '/agents', { name: 'pnl card', model: 'gpt-4o-mini', skills: ['trading'] })).body as { id: string }
    await seller.api('POST', '/dev/faucet', { agentId: agent.id, eth: '2', usdc: '500' })
    const swap = await seller.api('POST', '/swap/execute', { agentId: agent.id, tokenIn: 'USDC', tokenOut: 'ETH', amountIn: '100', slippageBps: 300 })
    expect(swap.body.status).toBe('confirmed')
    const portfolio = (await seller.api('GET', `/wallet/portfolio?agentId=${agent.id}`)).body
    const listing = (await seller.api('POST', '/market', { agentId: agent.id, priceCredits: 100 })).body
    const { pnl } = (await seller.api('GET', `/market/${listing.id}`)).body.agent
    for (const v of [pnl.costBasisUsd, pnl.realisedUsd, pnl.unrealisedUsd]) expect(Number.isFinite(Number(v)) && v !== null).toBe(true)
    expect(pnl).toMatchObject({ costBasisUsd: portfolio.costBasisUsd, realisedUsd: portfolio.realisedPnlUsd })
    expect(pnl.note).not.toContain('not tracked')
    await seller.api('DELETE', `/market/${listing.id}`)
  })

  it("an ended listing shows the card as it was when it ended, not the agent's current one", async () => {
    const { agentId, listingId } = await listed('as listed', 100, { funded: true })
    const before = (await seller.api('GET', `/market/${listingId}`)).body.agent
    const buyer = await app.account({ name: 'card buyer' })
    const sold = await buyer.api('POST', `/market/${listingId}/buy`)
    expect(sold.body.agent).toEqual(before)
    await buyer.api('PATCH', `/agents/${agentId}`, { name: 'renamed by buyer', strategy: 'secret new strategy', skills: ['trading'] })
    await buyer.api('POST', '/swap/execute', { agentId, tokenIn: 'USDC', tokenOut: 'ETH', amountIn: '200', slippageBps: 300 })
    const after = (await buyer.api('GET', `/market/${listingId}`)).body.agent
    expect(after).toEqual(before)

    const cancelled = await listed('cancelled card')
    const shown = (await seller.api('GET', `/market/${cancelled.listingId}`)).body.agent
    await seller.api('DELETE', `/market/${cancelled.listingId}`)
    await seller.api('PATCH', `/agents/${cancelled.agentId}`, { name: 'renamed later', strategy: 'other' })
    expect((await seller.api('GET', `/market/${cancelled.listingId}`)).body.agent).toEqual(shown)
  })
})

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type pg from 'pg'
import { startTestApp, type Api, type TestApp } from './support/app.ts'
import { waitFor } from './support/waitFor.ts'

/**
 * A swap of the seller's in flight when the agent is listed and sold: it finished before the
 * listing (confirmed, in the holdings listed) or it is refused (409 naming the listing, 404 once
 * sold) and sends nothing; never a transaction from the wallet for the seller after the sale.
 */
let app: TestApp
let seller: { accountId: string; api: Api }

beforeAll(async () => {
  app = await startTestApp({ STARTER_CREDITS: '10000' }, { withChain: true })
  seller = await app.account({ name: 'racing seller' })
})
afterAll(async () => {
  await app?.close()
})

const swapBody = (agentId: string, extra: Record<string, unknown> = {}) => ({ agentId, tokenIn: 'USDC', tokenOut: 'ETH', amountIn: '40', slippageBps: 300, ...extra })
const balances = (holdings: Array<{ symbol: string; balance: string }>) => holdings.map((h) => [h.symbol, h.balance])
const count = async (sql: string, params: unknown[]) => (await app.services.pool.query(sql, params)).rows[0].n as number

async function fundedAgent(name: string) {
  const agent = (await seller.api('POST', '/agents', { name, model: 'gpt-4o-mini', skills: ['trading'] })).body as { id: string }
  expect((await seller.api('POST', '/dev/faucet', { agentId: agent.id, eth: '2', usdc: '500' })).status).toBe(200)
  return agent.id
}

/**
 * A swap with a quote that has read the agent and waits on the quote (this test holds the quote
 * table), so the listing (and the sale) commit while it is in flight; `release` lets it go on.
 */
async function heldSwap(agentId: string) {
  const quote = await seller.api('POST', '/swap/quote', swapBody(agentId))
  expect(quote.status).toBe(200)
  const holder: pg.PoolClient = await app.services.pool.connect()
  await holder.query('begin')
  await holder.query('lock table swap_quote in access exclusive mode')
  const swap = seller.api('POST', '/swap/execute', swapBody(agentId, { quoteId: quote.body.quoteId }))
  let held = true
  const release = async () => {
    if (!held) return
    held = false
    await holder.query('commit')
    holder.release()
  }
  await waitFor(async () => (await count(`select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and query like 'select data, used_by from swap_quote%'`, [])) === 1, 20_000).catch(async (err) => {
    await release()
    throw err
  })
  return { swap, release }
}

/** What the sale must leave: no operation of the seller's recorded and no transaction sent for the agent since the listing was created. */
async function nothingSentSince(agentId: string, listingId: string) {
  expect(await count(`select count(*)::int as n from wallet_op w join listing l on l.id = $2 where w.agent_id = $1 and w.created_at >= l.created_at`, [agentId, listingId])).toBe(0)
  expect(await count(`select count(*)::int as n from chain_tx t join listing l on l.id = $2 where t.agent_id = $1 and t.created_at >= l.created_at`, [agentId, listingId])).toBe(0)
}

describe("the seller's swap in flight at the sale", () => {
  it.each(['a buy', 'an accepted bid'] as const)('one that read the agent before the listing and records its move after the sale (%s) is refused with 404 and sends nothing', async (sale) => {
    const agentId = await fundedAgent(`sold mid-swap by ${sale}`)
    const held = await heldSwap(agentId)
    let listingId = ''
    try {
      const listing = await seller.api('POST', '/market', { agentId, priceCredits: 100 })
      expect(listing.status).toBe(201)
      listingId = listing.body.id
      const listed = (await seller.api('GET', `/wallet/portfolio?agentId=${agentId}`)).body.holdings
      const buyer = await app.account({ name: 'mid-swap buyer' })
      if (sale === 'a buy') expect((await buyer.api('POST', `/market/${listingId}/buy`)).status).toBe(200)
      else {
        const bid = await buyer.api('POST', `/market/${listingId}/bids`, { credits: 80 })
        expect((await seller.api('POST', `/market/bids/${bid.body.id}/accept`)).body.status).toBe('sold')
      }
      await held.release()
      const res = await held.swap
      expect({ status: res.status, code: res.body.code }).toEqual({ status: 404, code: 'not_found' })
      await nothingSentSince(agentId, listingId)
      expect(balances((await buyer.api('GET', `/wallet/portfolio?agentId=${agentId}`)).body.holdings)).toEqual(balances(listed))
    } finally {
      await held.release()
    }
  })

  it('one that records its move after the listing (before the sale) is refused with 409 naming the listing', async () => {
    const agentId = await fundedAgent('listed mid-swap')
    const held = await heldSwap(agentId)
    const listing = await seller.api('POST', '/market', { agentId, priceCredits: 100 })
    await held.release()
    expect(listing.status).toBe(201)
    const res = await held.swap
    expect({ status: res.status, code: res.body.code }).toEqual({ status: 409, code: 'invalid_state' })
    expect(res.body.error).toContain(listing.body.id)
    const listed = (await seller.api('GET', `/wallet/portfolio?agentId=${agentId}`)).body.holdings
    const buyer = await app.account({ name: 'listed mid-swap buyer' })
    expect((await buyer.api('POST', `/market/${listing.body.id}/buy`)).status).toBe(200)
    await nothingSentSince(agentId, listing.body.id)
    expect(balances((await buyer.api('GET', `/wallet/portfolio?agentId=${agentId}`)).body.holdings)).toEqual(balances(listed))
  })

  it('raced with the listing and the sale, 9 times: each swap finished before the listing (and is in its holdings) or was refused and sent nothing', async () => {
    const outcomes: string[] = []
    for (let i = 0; i < 9; i++) {
      const agentId = await fundedAgent(`race-${i}`)
      const usdcBefore = '500'
      // The listing is asked for at once, once the swap recorded its move (in flight), or once it answered.
      const mode = (['at once', 'once recorded', 'once answered'] as const)[i % 3]!
      const swapping = seller.api('POST', '/swap/execute', swapBody(agentId))
      if (mode === 'once recorded') await waitFor(async () => (await count('select count(*)::int as n from wallet_op where agent_id = $1', [agentId])) === 1, 20_000)
      if (mode === 'once answered') await swapping
      const [swap, first] = await Promise.all([swapping, seller.api('POST', '/market', { agentId, priceCredits: 100 })])
      let listing = first
      if (listing.status === 409) {
        // The swap was in flight when the listing was asked for: refused (a money move in flight); list once it ended.
        expect(listing.body.code).toBe('invalid_state')
        listing = await seller.api('POST', '/market', { agentId, priceCredits: 100 })
      }
      expect(listing.status).toBe(201)
      const listed = (await seller.api('GET', `/wallet/portfolio?agentId=${agentId}`)).body.holdings as Array<{ symbol: string; balance: string }>
      const buyer = await app.account({ name: `race buyer ${i}` })
      expect((await buyer.api('POST', `/market/${listing.body.id}/buy`)).status).toBe(200)
      const ops = (await app.services.pool.query(`select w.created_at < l.created_at as before_listing, x.status from wallet_op w join listing l on l.id = $2 left join actor x on x.id = w.id where w.agent_id = $1`, [agentId, listing.body.id])).rows
      if (swap.status === 200) {
        outcomes.push(`${mode}: confirmed${first.status === 409 ? ', listing retried' : ''}`)
        expect(swap.body.status).toBe('confirmed')
        expect(ops).toEqual([{ before_listing: true, status: 'confirmed' }])
        expect(listed.find((h) => h.symbol === 'USDC')!.balance).toBe(String(Number(usdcBefore) - 40))
      } else {
        outcomes.push(`${mode}: refused`)
        expect({ status: swap.status, code: swap.body.code }).toEqual({ status: 409, code: 'invalid_state' })
        expect(swap.body.error).toContain(listing.body.id)
        expect(ops).toEqual([])
        expect(listed.find((h) => h.symbol === 'USDC')!.balance).toBe(usdcBefore)
      }
      await nothingSentSince(agentId, listing.body.id)
      expect(balances((await buyer.api('GET', `/wallet/portfolio?agentId=${agentId}`)).body.holdings)).toEqual(balances(listed))
    }
    expect(outcomes).toHaveLength(9)
  })
})

import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import pg from 'pg'
import { apiClient, type Api } from './support/app.ts'
import { createTestDatabase } from './support/db.ts'
import { adminCreateAccount, kill9, startServer, serverCleanup, type ServerProcess } from './support/server.ts'

const { servers, cleanups } = serverCleanup()

/** Waits (polling the database, no fixed sleep) until `check` holds, up to 20 s. */
async function until(check: () => Promise<boolean>, what: string) {
  const deadline = Date.now() + 20_000
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 25))
  }
}

describe('kill -9 during a sale: the whole sale or nothing', () => {
  let env: Record<string, string>
  let db: pg.Pool
  let server: ServerProcess
  beforeAll(async () => {
    const database = await createTestDatabase()
    const dataDir = mkdtempSync(join(tmpdir(), 'alts-market-crash-'))
    env = { DATABASE_URL: database.url, DATA_DIR: dataDir, STARTER_CREDITS: '10000' }
    db = new pg.Pool({ connectionString: database.url, max: 3 })
    cleanups.push(async () => {
      await db.end()
      await database.drop()
      rmSync(dataDir, { recursive: true, force: true })
    })
  })

  /** What a sale changes: the listing, the agent's and actor's owner, the ledger and the reservations. */
  const state = async (listingId: string, agentId: string) => {
    const { rows } = await db.query(
      `select l.status, a.account_id, x.account_id as actor_account, x.status as actor_status,
              (select count(*)::int from credit_entry where ref = 'listing:' || l.id) as entries,
              (select json_agg(json_build_object('id', id, 'credits', credits, 'reserved', credits_held(id)) order by id) from account) as accounts,
              (select json_agg(status order by created_at) from listing_bid where listing_id = l.id) as bids
         from listing l join agent a on a.id = l.agent_id join actor x on x.id = a.id::text where l.id = $1`,
      [listingId],
    )
    return rows[0]
  }

  /**
   * Sends `sale`, lets it write its ledger entries and stops it on the agent row (held by this
   * test's own transaction), kills the server there, and checks that nothing of the sale stayed.
   */
  async function killMidSale(sale: () => Promise<unknown>, listingId: string, agentId: string) {
    const before = await state(listingId, agentId)
    const blocker = await db.connect()
    await blocker.query('begin')
    await blocker.query('select 1 from agent where id = $1 for update', [agentId])
    void sale().catch(() => undefined)
    // The sale's transaction has locked the accounts and written its entries, and waits for the agent row.
    await until(async () => {
      const { rows } = await db.query(`select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and query like 'select skills from agent%'`)
      return rows[0].n === 1
    }, 'the sale to wait on the agent row')
    await kill9(server)
    await blocker.query('rollback')
    blocker.release()
    // The orphaned backend runs its statement, cannot answer, and rolls back: nothing was committed.
    await until(async () => {
      const { rows } = await db.query(`select count(*)::int as n from pg_stat_activity where query like 'select skills from agent%' and state <> 'idle'`)
      return rows[0].n === 0
    }, 'the killed sale to end')
    expect(await state(listingId, agentId)).toEqual(before)
  }

  it('a buy killed after its ledger writes leaves no trace; after a restart the buy settles whole, once', { timeout: 180_000 }, async () => {
    server = await startServer(env)
    servers.push(server)
    const seller = await adminCreateAccount(env)
    const buyer = await adminCreateAccount(env)
    const api = (key: string): Api => apiClient(`${server.url}/api/v1`, key)
    const agentId = (await api(seller.apiKey)('POST', '/agents', { name: 'crashy', model: 'gpt-4o-mini', skills: ['trading'] })).body.id as string
    const listingId = (await api(seller.apiKey)('POST', '/market', { agentId, priceCredits: 3000 })).body.id as string

    await killMidSale(() => api(buyer.apiKey)('POST', `/market/${listingId}/buy`, undefined, { 'idempotency-key': 'buy-1' }), listingId, agentId)
    const after = await state(listingId, agentId)
    expect(after).toMatchObject({ status: 'active', account_id: seller.accountId, actor_account: seller.accountId, actor_status: 'paused', entries: 0 })

    server = await startServer(env)
    servers.push(server)
    const bought = await api(buyer.apiKey)('POST', `/market/${listingId}/buy`, undefined, { 'idempotency-key': 'buy-2' })
    expect(bought.status).toBe(200)
    expect(await state(listingId, agentId)).toMatchObject({ status: 'sold', account_id: buyer.accountId, actor_account: buyer.accountId, actor_status: 'stopped', entries: 3 })
    expect((await api(buyer.apiKey)('GET', '/billing')).body.credits).toBe(7000)
    expect((await api(seller.apiKey)('GET', '/billing')).body.credits).toBe(10000 + 3000 - 150)
    expect((await api(buyer.apiKey)('GET', `/agents/${agentId}`)).body.status).toBe('stopped')
  })

  it('a bid acceptance killed mid-way leaves the bid reserved and the listing active; accepted again after a restart', { timeout: 180_000 }, async () => {
    const seller = await adminCreateAccount(env)
    const bidder = await adminCreateAccount(env)
    const api = (key: string): Api => apiClient(`${server.url}/api/v1`, key)
    const agentId = (await api(seller.apiKey)('POST', '/agents', { name: 'crashy-bid', model: 'gpt-4o-mini', skills: ['trading'] })).body.id as string
    const listingId = (await api(seller.apiKey)('POST', '/market', { agentId, priceCredits: 9000 })).body.id as string
    const bidId = (await api(bidder.apiKey)('POST', `/market/${listingId}/bids`, { credits: 2000 })).body.id as string

    await killMidSale(() => api(seller.apiKey)('POST', `/market/bids/${bidId}/accept`), listingId, agentId)
    expect(await state(listingId, agentId)).toMatchObject({ status: 'active', account_id: seller.accountId, entries: 0, bids: ['active'] })

    server = await startServer(env)
    servers.push(server)
    const accepted = await api(seller.apiKey)('POST', `/market/bids/${bidId}/accept`)
    expect(accepted.status).toBe(200)
    const sold = await state(listingId, agentId)
    expect(sold).toMatchObject({ status: 'sold', account_id: bidder.accountId, actor_status: 'stopped', entries: 3, bids: ['accepted'] })
    const b = sold.accounts.find((a: { id: string }) => a.id === bidder.accountId)
    expect(b).toEqual({ id: bidder.accountId, credits: 8000, reserved: 0 })
  })
})

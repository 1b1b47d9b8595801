import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { createSiweMessage } from 'viem/siwe'
import { apiClient, startTestApp, type Api, type TestApp } from './support/app.ts'
import { startModelServer, type ModelServer } from './support/modelServer.ts'

/**
 * After a sale: the seller's API key, SIWE session and MCP (plain calls and an MCP session opened
 * before the sale) lose the agent at once; the buyer starts it, trades, chats and transfers to an
 * address it whitelisted, from a wallet holding what the listing showed. And the sale's ledger,
 * entry by entry.
 */
let app: TestApp
let model: ModelServer
const DOMAIN = 'market.test'
const friend = '0x00000000000000000000000000000000000f00d2'

beforeAll(async () => {
  model = await startModelServer()
  app = await startTestApp(
    { STARTER_CREDITS: '10000', OPENAI_BASE_URL: model.baseUrl, OPENAI_API_KEY: 'test-key', SIWE_DOMAIN: DOMAIN, WHITELIST_HOLD_SECONDS: '0' },
    { withChain: true },
  )
})
afterAll(async () => {
  await app?.close()
  await model?.stop()
})

/** A wallet signs in (SIWE): the session's cookie and CSRF token on every request. */
async function siweAccount(): Promise<{ accountId: string; session: Api }> {
  const pub = apiClient(`${app.url}/api/v1`)
  const account = privateKeyToAccount(generatePrivateKey())
  const nonce = (await pub('GET', '/auth/nonce')).body.nonce
  const message = createSiweMessage({ address: account.address, chainId: 31337, domain: DOMAIN, nonce, uri: `https://${DOMAIN}`, version: '1' })
  const res = await pub('POST', '/auth/siwe', { message, signature: await account.signMessage({ message }) })
  expect(res.status).toBe(200)
  const cookie = (res.headers.get('set-cookie') ?? '').split(';')[0]!
  const session: Api = (method, path, body, headers = {}) => pub(method, path, body, { cookie, 'x-csrf-token': res.body.csrfToken, ...headers })
  return { accountId: res.body.account.id, session }
}

async function mcpSession(key: string) {
  const client = new Client({ name: 'seller', version: '1.0.0' })
  await client.connect(new StreamableHTTPClientTransport(new URL(`${app.url}/api/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }))
  const call = async (name: string, args: Record<string, unknown>) => {
    const r = (await client.callTool({ name, arguments: args })) as { isError?: boolean; content: Array<{ type: string; text?: string }> }
    return { isError: r.isError ?? false, body: JSON.parse(r.content.find((c) => c.type === 'text')?.text ?? 'null') }
  }
  const resource = async (uri: string) => JSON.parse(((await client.readResource({ uri })).contents[0] as { text: string }).text)
  return { call, resource, close: () => client.close() }
}

const count = async (sql: string, params: unknown[]) => (await app.services.pool.query(sql, params)).rows[0].n as number
const balances = (holdings: Array<{ symbol: string; balance: string }>) => holdings.map((h) => [h.symbol, h.balance])

describe('after a sale', () => {
  it("the seller's key, SIWE session and MCP get 404 for the agent; the buyer starts, swaps, chats and transfers with what was listed", async () => {
    const { session } = await siweAccount()
    const key = (await session('POST', '/keys', { name: 'seller key', scopes: ['read', 'trade', 'admin'] })).body.key as string
    const keyApi = apiClient(`${app.url}/api/v1`, key)
    const agent = (await session('POST', '/agents', { name: 'Handed over', model: 'gpt-4o-mini', skills: ['trading', 'wallet'] })).body as { id: string; walletAddress: string }
    expect((await session('POST', '/dev/faucet', { agentId: agent.id, eth: '2', usdc: '500' })).status).toBe(200)
    expect((await session('POST', `/agents/${agent.id}/whitelist`, { address: friend })).status).toBe(201)
    const traded = await session('POST', '/swap/execute', { agentId: agent.id, tokenIn: 'USDC', tokenOut: 'ETH', amountIn: '50', slippageBps: 300 })
    expect(traded.body.status).toBe('confirmed')
    const mcp = await mcpSession(key)
    try {
      expect((await mcp.call('get_agent', { agent_id: agent.id })).body).toMatchObject({ id: agent.id })
      const listing = (await session('POST', '/market', { agentId: agent.id, priceCredits: 1999 })).body
      const listed = (await session('GET', `/wallet/portfolio?agentId=${agent.id}`)).body.holdings
      const buyer = await app.account({ name: 'new owner' })
      expect((await buyer.api('POST', `/market/${listing.id}/buy`, undefined, { 'idempotency-key': 'handover' })).status).toBe(200)
      const chainTxs = await count('select count(*)::int as n from chain_tx where agent_id = $1', [agent.id])

      // REST, with the seller's key and with its SIWE session.
      for (const [who, api] of [['key', keyApi], ['siwe', session]] as const) {
        for (const [method, path, body] of [
          ['GET', `/agents/${agent.id}`, undefined],
          ['POST', `/agents/${agent.id}/start`, undefined],
          ['POST', `/agents/${agent.id}/chat`, { message: 'still mine?' }],
          ['GET', `/agents/${agent.id}/messages`, undefined],
          ['POST', '/wallet/transfer', { agentId: agent.id, to: friend, token: 'USDC', amount: '1' }],
          ['GET', `/wallet/portfolio?agentId=${agent.id}`, undefined],
          ['GET', `/agents/${agent.id}/whitelist`, undefined],
        ] as const) {
          const res = await api(method, path, body)
          expect({ who, path, status: res.status, code: res.body?.code }).toEqual({ who, path, status: 404, code: 'not_found' })
        }
        // A swap names its agent in the body: the swap's usual 422 on agentId (docs/api.md, Market).
        const swap = await api('POST', '/swap/execute', { agentId: agent.id, tokenIn: 'USDC', tokenOut: 'ETH', amountIn: '1', slippageBps: 100 })
        expect({ who, status: swap.status, agentId: swap.body.field_errors?.agentId }).toEqual({ who, status: 422, agentId: 'No such agent in this account.' })
      }
      // MCP: plain calls, and the MCP session the seller opened before the sale.
      const mcpCall = apiClient(`${app.url}/api`, key)
      const attempts: Array<[string, Record<string, unknown>]> = [
        ['get_agent', { agent_id: agent.id }],
        ['get_portfolio', { agent_id: agent.id }],
        ['swap_execute', { agent_id: agent.id, tokenIn: 'USDC', tokenOut: 'ETH', amountIn: '1', confirm: true, idempotencyKey: 'after-sale' }],
        ['wallet_transfer', { agent_id: agent.id, to: friend, token: 'USDC', amount: '1', confirm: true, idempotencyKey: 'after-sale-t' }],
        ['chat_with_agent', { agent_id: agent.id, message: 'still mine?' }],
      ]
      for (const [name, args] of attempts) {
        // Every tool given an agent the caller cannot see answers not_found, swap_execute too (docs/api.md, MCP).
        const want = { status: 404, code: 'not_found' }
        const plain = await mcpCall('POST', '/mcp/call', { name, arguments: args })
        expect({ name, status: plain.status, code: plain.body.code }).toEqual({ name, ...want })
        const held = await mcp.call(name, args)
        expect({ name, isError: held.isError, code: held.body.code }).toEqual({ name, isError: true, code: want.code })
      }
      expect((await mcp.resource('alts://agents')).agents.map((a: { id: string }) => a.id)).not.toContain(agent.id)
      // Nothing left the wallet for the seller: no operation recorded for it, no transaction sent.
      expect(await count(`select count(*)::int as n from wallet_op w join listing l on l.id = $2 where w.agent_id = $1 and w.created_at > l.ended_at`, [agent.id, listing.id])).toBe(0)
      expect(await count('select count(*)::int as n from chain_tx where agent_id = $1', [agent.id])).toBe(chainTxs)
      expect(await count(`select count(*)::int as n from chat_message where agent_id = $1`, [agent.id])).toBe(0)

      // The buyer: the wallet holds what the listing showed; it starts, swaps, chats and transfers.
      expect(balances((await buyer.api('GET', `/wallet/portfolio?agentId=${agent.id}`)).body.holdings)).toEqual(balances(listed))
      expect((await buyer.api('POST', `/agents/${agent.id}/start`)).body.status).toBe('running')
      const swap = await buyer.api('POST', '/swap/execute', { agentId: agent.id, tokenIn: 'USDC', tokenOut: 'ETH', amountIn: '25', slippageBps: 300 })
      expect({ status: swap.status, swap: swap.body.status }).toEqual({ status: 200, swap: 'confirmed' })
      model.mock.onMessage('hello new owner', { content: 'hello, I am yours now' })
      const chat = await buyer.api('POST', `/agents/${agent.id}/chat`, { message: 'hello new owner' })
      expect(chat.status).toBe(200)
      expect(JSON.stringify(chat.body)).toContain('hello, I am yours now')
      expect((await buyer.api('GET', `/agents/${agent.id}/whitelist`)).body.whitelist).toEqual([])
      const refused = await buyer.api('POST', '/wallet/transfer', { agentId: agent.id, to: friend, token: 'USDC', amount: '5' })
      expect({ status: refused.status, code: refused.body.code }).toEqual({ status: 403, code: 'address_not_whitelisted' })
      expect((await buyer.api('POST', `/agents/${agent.id}/whitelist`, { address: friend })).status).toBe(201)
      const sent = await buyer.api('POST', '/wallet/transfer', { agentId: agent.id, to: friend, token: 'USDC', amount: '5' })
      expect({ status: sent.status, transfer: sent.body.status }).toEqual({ status: 200, transfer: 'confirmed' })
      const receipt = await app.services.chain!.publicClient.getTransactionReceipt({ hash: sent.body.txHash })
      expect(receipt.status).toBe('success')
      const { rows } = await app.services.pool.query(`select distinct account_id from wallet_op w join listing l on l.id = $2 where w.agent_id = $1 and w.created_at > l.ended_at`, [agent.id, listing.id])
      expect(rows).toEqual([{ account_id: buyer.accountId }])
    } finally {
      await mcp.close()
    }
  })

  it('writes exactly the three entries of the sale (purchase, sale, 5% fee rounded down), none elsewhere, each balance consistent', async () => {
    const seller = await app.account({ name: 'ledger seller' })
    const buyer = await app.account({ name: 'ledger buyer' })
    const bystander = await app.account({ name: 'ledger bystander' })
    const agent = (await seller.api('POST', '/agents', { name: 'Booked', model: 'gpt-4o-mini', skills: ['trading'] })).body as { id: string }
    const listing = (await seller.api('POST', '/market', { agentId: agent.id, priceCredits: 1999 })).body
    const bid = await bystander.api('POST', `/market/${listing.id}/bids`, { credits: 500 })
    expect(bid.status).toBe(201)
    const accounts = [seller.accountId, buyer.accountId, bystander.accountId]
    const balancesOf = async () =>
      Object.fromEntries((await app.services.pool.query('select id, credits::bigint as c, credits_held(id)::bigint as r from account where id = any($1::uuid[])', [accounts])).rows.map((r) => [r.id, [Number(r.c), Number(r.r)]]))
    // Charges of earlier tests still pending are folded first: what joins the ledger from here is the sale's.
    await app.services.pool.query('select credits_fold(id) from account')
    const before = await balancesOf()
    const { rows: prior } = await app.services.pool.query('select id from credit_entry')
    const priorIds = new Set(prior.map((r) => r.id))

    expect((await buyer.api('POST', `/market/${listing.id}/buy`)).status).toBe(200)
    expect((await buyer.api('POST', `/market/${listing.id}/buy`)).body.status).toBe('sold')

    const fee = Math.floor((1999 * 5) / 100)
    expect(fee).toBe(99)
    const { rows: all } = await app.services.pool.query('select id, account_id, kind, credits::bigint as credits, balance_after::bigint as balance_after, ref from credit_entry order by created_at, id')
    const fresh = all.filter((e) => !priorIds.has(e.id)).map((e) => ({ account: e.account_id, kind: e.kind, credits: Number(e.credits), balanceAfter: Number(e.balance_after), ref: e.ref }))
    const [sellerBefore] = before[seller.accountId]!
    const [buyerBefore] = before[buyer.accountId]!
    const ref = `listing:${listing.id}`
    expect(fresh.sort((a, b) => a.kind.localeCompare(b.kind))).toEqual([
      { account: seller.accountId, kind: 'market_fee', credits: -fee, balanceAfter: sellerBefore + 1999 - fee, ref },
      { account: buyer.accountId, kind: 'market_purchase', credits: -1999, balanceAfter: buyerBefore - 1999, ref },
      { account: seller.accountId, kind: 'market_sale', credits: 1999, balanceAfter: sellerBefore + 1999, ref },
    ])
    // None elsewhere: no other entry carries the listing's ref; the sale nets to minus the fee.
    expect(all.filter((e) => e.ref === ref)).toHaveLength(3)
    expect(fresh.reduce((n, e) => n + e.credits, 0)).toBe(-fee)
    // Balances moved by exactly those entries; the bystander's bid expired, its reservation released, its credits untouched.
    const after = await balancesOf()
    expect(after).toEqual({
      [seller.accountId]: [sellerBefore + 1999 - fee, 0],
      [buyer.accountId]: [buyerBefore - 1999, 0],
      [bystander.accountId]: [before[bystander.accountId]![0], 0],
    })
    expect(before[bystander.accountId]![1]).toBe(500)
    const { rows: ledger } = await app.services.pool.query(
      'select a.id, a.credits::bigint as credits, coalesce(sum(e.credits), 0)::bigint as sum from account a left join credit_entry e on e.account_id = a.id where a.id = any($1::uuid[]) group by a.id',
      [accounts],
    )
    for (const r of ledger) expect(Number(r.sum)).toBe(Number(r.credits))
    const { rows: listed } = await app.services.pool.query('select sale_credits::int as sale, fee_credits::int as fee from listing where id = $1', [listing.id])
    expect(listed[0]).toEqual({ sale: 1999, fee })
    expect((await seller.api('GET', '/market/history')).body.listings[0]).toMatchObject({ id: listing.id, role: 'seller', saleCredits: 1999, feeCredits: fee })
  })

  it("the buyer reads the agent at once though this node holds the seller's row in memory; the seller's past runs stay the seller's", async () => {
    const seller = await app.account({ name: 'runs seller' })
    const agent = (await seller.api('POST', '/agents', { name: 'Read at once', model: 'gpt-4o-mini', skills: ['trading'] })).body as { id: string }
    model.mock.onMessage('seller private goal', { content: 'seller private answer' })
    const run = (await seller.api('POST', `/agents/${agent.id}/runs`, { goal: 'seller private goal' })).body
    await app.services.runtime.waitFor(run.id, (e) => e.status === 'completed', 10_000)
    const listing = (await seller.api('POST', '/market', { agentId: agent.id, priceCredits: 10 })).body
    // The seller's read puts the agent's row in this node's memory (kept 2 s), just before the sale.
    expect((await seller.api('GET', `/agents/${agent.id}`)).status).toBe(200)
    const buyer = await app.account({ name: 'runs buyer' })
    expect((await buyer.api('POST', `/market/${listing.id}/buy`)).status).toBe(200)
    const got = await buyer.api('GET', `/agents/${agent.id}`)
    expect({ status: got.status, id: got.body.id, agentStatus: got.body.status }).toEqual({ status: 200, id: agent.id, agentStatus: 'stopped' })
    // The actor heard the sale through the runtime, in the sale's transaction: the machine's own
    // transition (the buyer's, stopped, no schedule), journaled under the buyer's account.
    const actor = (await app.services.pool.query('select account_id, status, version, snapshot from actor where id = $1', [agent.id])).rows[0]
    expect({ account: actor.account_id, status: actor.status, context: actor.snapshot.context }).toMatchObject({
      account: buyer.accountId, status: 'stopped', context: { accountId: buyer.accountId, reason: null, runIntervalSeconds: 0, automationsWaiting: false },
    })
    const last = (await app.services.pool.query('select seq, account_id, event from actor_journal where actor_id = $1 order by seq desc limit 1', [agent.id])).rows[0]
    expect(last).toEqual({ seq: actor.version, account_id: buyer.accountId, event: { type: 'market.sold', listingId: listing.id, accountId: buyer.accountId } })
    expect((await app.services.runtime.get(agent.id))?.snapshot.context).toMatchObject({ accountId: buyer.accountId })
    const viaMcp = await apiClient(`${app.url}/api`, buyer.apiKey)('POST', '/mcp/call', { name: 'get_agent', arguments: { agent_id: agent.id } })
    expect(viaMcp.body.result).toMatchObject({ id: agent.id })

    // The seller's run: not in the buyer's list nor readable by it; still the seller's.
    const listed = await buyer.api('GET', `/agents/${agent.id}/runs`)
    expect({ status: listed.status, runs: listed.body.runs }).toEqual({ status: 200, runs: [] })
    expect(JSON.stringify(listed.body)).not.toContain('seller private')
    expect((await buyer.api('GET', `/runs/${run.id}`)).status).toBe(404)
    expect((await seller.api('GET', `/runs/${run.id}`)).body).toMatchObject({ id: run.id, status: 'completed', summary: 'seller private answer' })
    model.mock.onMessage('buyer goal', { content: 'buyer answer' })
    const own = (await buyer.api('POST', `/agents/${agent.id}/runs`, { goal: 'buyer goal' })).body
    await app.services.runtime.waitFor(own.id, (e) => e.status === 'completed', 10_000)
    expect((await buyer.api('GET', `/agents/${agent.id}/runs`)).body.runs.map((r: { id: string }) => r.id)).toEqual([own.id])
  })
})

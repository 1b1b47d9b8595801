import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { randomUUID } from 'node:crypto'
import { apiClient, startTestApp, waitForLaunchEnd, type Api, type TestApp } from './support/app.ts'

// Addresses where sent funds are lost: the zero address (burned) and the token contracts the
// service knows (a transfer to a token's own contract is stuck there). Neither may be
// whitelisted (nor be the payout wallet, for the zero address); nothing is recorded.
let app: TestApp
let api: Api
let apiKey: string
let agentId: string
const ZERO = `0x${'0'.repeat(40)}`

beforeAll(async () => {
  app = await startTestApp({ WHITELIST_HOLD_SECONDS: '0' }, { withChain: true })
  ;({ api, apiKey } = await app.account())
  const res = await api('POST', '/agents', { name: 'careful', model: 'gpt-4o-mini', skills: ['trading'] })
  expect(res.status).toBe(201)
  agentId = res.body.id
}, 120_000)
afterAll(async () => {
  await app?.close()
})

const whitelisted = async () => (await api('GET', `/agents/${agentId}/whitelist`)).body.whitelist.map((e: { address: string }) => e.address)

describe('whitelist targets', () => {
  it('the zero address is 422 naming address (whitelist, tool) or payout_wallet (create, update), and nothing is recorded', async () => {
    const add = await api('POST', `/agents/${agentId}/whitelist`, { address: ZERO })
    expect({ status: add.status, code: add.body.code, fields: Object.keys(add.body.field_errors ?? {}) }).toEqual({ status: 422, code: 'validation_failed', fields: ['address'] })
    const tool = await apiClient(`${app.url}/api/mcp`, apiKey)('POST', '/call', { name: 'add_to_whitelist', arguments: { agent_id: agentId, address: ZERO } })
    expect({ status: tool.status, code: tool.body.code }).toEqual({ status: 422, code: 'validation_failed' })
    const created = await api('POST', '/agents', { name: 'burner', model: 'gpt-4o-mini', skills: [], payout_wallet: ZERO })
    expect({ status: created.status, fields: Object.keys(created.body.field_errors ?? {}) }).toEqual({ status: 422, fields: ['payout_wallet'] })
    const patched = await api('PATCH', `/agents/${agentId}`, { payout_wallet: ZERO })
    expect({ status: patched.status, fields: Object.keys(patched.body.field_errors ?? {}) }).toEqual({ status: 422, fields: ['payout_wallet'] })
    expect(await whitelisted()).toEqual([])
    expect((await api('GET', `/agents/${agentId}`)).body.payoutWallet).toBeNull()
  })

  it("a token contract the service knows (WETH, USDC, a stock, a launched token) is 422 naming address; another address is taken", async () => {
    const m = app.services.chain!.manifest
    const known = [m.contracts.weth, m.contracts.usdc, m.stocks[0]!.address]
    for (const address of known) {
      const res = await api('POST', `/agents/${agentId}/whitelist`, { address })
      expect({ address, status: res.status, code: res.body.code, message: res.body.field_errors?.address }).toEqual({
        address, status: 422, code: 'validation_failed', message: expect.stringContaining("token's own contract"),
      })
    }
    // A token launched here: refused once the service has indexed it.
    expect((await api('POST', '/dev/faucet', { agentId, eth: '5' })).status).toBe(200)
    const launch = await api('POST', '/launch/venue-a', { agentId, symbol: 'LOST', name: 'Lost', quote: 'ETH' }, { 'idempotency-key': randomUUID() })
    expect(launch.status, JSON.stringify(launch.body)).toBe(202)
    const live = await waitForLaunchEnd(api, launch.body.id)
    expect(live.status).toBe('live')
    await expect.poll(async () => (await api('POST', `/agents/${agentId}/whitelist`, { address: live.tokenAddress })).body.field_errors?.address, { timeout: 20_000 }).toContain("LOST token's own contract")
    expect(await whitelisted()).toEqual([])
    const friend = `0x${'ab'.repeat(20)}`
    expect((await api('POST', `/agents/${agentId}/whitelist`, { address: friend })).status).toBe(201)
    expect(await whitelisted()).toEqual([friend])
  })
})

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { apiClient, startTestApp, type Api, type TestApp } from './support/app.ts'

/**
 * The owners' policies' dry run (`POST /policies/simulate`): the decision and every matching rule
 * with its scope and reason, for a swap, a transfer, a launch and a fee claim, nothing reserved,
 * saved or sent; and an agent's effective policy on the operator's card (`GET /ops/agents/:id`).
 */
let app: TestApp
let api: Api
let agentId: string
let wallet: `0x${string}`
const friend = '0x' + '7a'.repeat(20)
const q = (sql: string, params: unknown[] = []) => app.services.pool.query(sql, params).then((r) => r.rows)
const simulate = (operation: object, extra: object = {}) => api('POST', '/policies/simulate', { agentId, operation, ...extra })

beforeAll(async () => {
  app = await startTestApp({}, { withChain: true })
  ;({ api } = await app.account())
  const created = await api('POST', '/agents', { name: 'dry', model: 'gpt-4o-mini', skills: [] })
  agentId = created.body.id
  wallet = created.body.walletAddress
  expect((await api('POST', '/dev/faucet', { agentId, eth: '1', usdc: '100' })).status).toBe(200)
  expect((await api('PUT', '/policies/account', { rules: [
    { name: 'no big swaps', action: 'reject', criteria: [{ type: 'operation', operations: ['swap'] }, { type: 'usd_value', operator: 'gt', usd: '100' }] },
    { name: 'eth ok', action: 'accept', criteria: [{ type: 'token', tokens: ['ETH'], side: 'in' }] },
  ] })).status).toBe(200)
  expect((await api('PUT', `/agents/${agentId}/policy`, { rules: [
    { name: 'ask for transfers', action: 'require_approval', criteria: [{ type: 'destination', addresses: [friend] }] },
    { name: 'mirrors stop', action: 'reject', criteria: [{ type: 'initiator', initiators: ['mirror'] }] },
  ] })).status).toBe(200)
}, 120_000)
afterAll(async () => {
  await app?.close()
})

describe('POST /policies/simulate', () => {
  it('answers the decision and every matching rule with its scope and reason; nothing is recorded or sent', async () => {
    const nonce = await app.services.chain!.publicClient.getTransactionCount({ address: wallet })
    const small = await simulate({ kind: 'swap', tokenIn: 'ETH', tokenOut: 'USDC', amountIn: '0.001' })
    expect(small.status, JSON.stringify(small.body)).toBe(200)
    expect(small.body).toMatchObject({
      decision: 'accept', rule: { name: 'eth ok', scope: 'account' },
      matched: [{ rule: 'eth ok', scope: 'account', action: 'accept', reason: 'token in is ETH' }],
      operation: { kind: 'swap', usdValue: expect.any(String) },
    })
    const big = await simulate({ kind: 'swap', tokenIn: 'ETH', tokenOut: 'USDC', amountIn: '0.5' })
    expect(big.body).toMatchObject({ decision: 'reject', rule: { name: 'no big swaps', scope: 'account' } })
    expect(big.body.matched.map((m: { rule: string }) => m.rule)).toEqual(['no big swaps', 'eth ok'])
    expect(big.body.matched[0].reason).toBe('operation is swap, USD value gt 100')
    const mirrored = await simulate({ kind: 'swap', tokenIn: 'ETH', tokenOut: 'USDC', amountIn: '0.001' }, { initiator: 'mirror' })
    expect(mirrored.body).toMatchObject({ decision: 'reject', rule: { name: 'mirrors stop', scope: 'agent' }, operation: { kind: 'swap' } })
    const transfer = await simulate({ kind: 'transfer', token: 'USDC', amount: '5', to: friend })
    expect(transfer.body).toMatchObject({ decision: 'require_approval', rule: { name: 'ask for transfers', scope: 'agent' }, operation: { kind: 'transfer', destination: friend, usdValue: expect.any(String) } })
    const launch = await simulate({ kind: 'launch', venue: 'venue-a', quote: 'ETH' })
    expect(launch.body).toMatchObject({ decision: 'guardrails', rule: null, matched: [], operation: { kind: 'launch', usdValue: '0.00' } })
    expect((await simulate({ kind: 'fee_claim' })).body).toMatchObject({ decision: 'guardrails' })
    expect(await q('select count(*)::int as n from wallet_op where agent_id = $1', [agentId])).toEqual([{ n: 0 }])
    expect(await q('select count(*)::int as n from swap_quote')).toEqual([{ n: 0 }])
    expect(await app.services.chain!.publicClient.getTransactionCount({ address: wallet })).toBe(nonce)
  })

  it("answers 422 naming a bad field, 404 for another account's agent, 403 without the admin scope", async () => {
    const bad = await simulate({ kind: 'bridge' })
    expect({ status: bad.status, fields: Object.keys(bad.body.field_errors) }).toEqual({ status: 422, fields: ['operation.kind'] })
    const badTo = await simulate({ kind: 'transfer', token: 'USDC', amount: '5', to: '0x12' })
    expect(badTo.body.field_errors).toEqual({ 'operation.to': expect.any(String) })
    const other = (await (await app.account({ name: 'other' })).api('POST', '/agents', { name: 'theirs', model: 'gpt-4o-mini', skills: [] })).body.id
    expect((await api('POST', '/policies/simulate', { agentId: other, operation: { kind: 'fee_claim' } })).status).toBe(404)
    expect((await api('POST', '/policies/simulate', { agentId: other, operation: { kind: 'swap', tokenIn: 'ETH', tokenOut: 'USDC', amountIn: '0.001' } })).status).toBe(422)
    const trader = apiClient(`${app.url}/api/v1`, (await api('POST', '/keys', { name: 't', scopes: ['read', 'trade'] })).body.key)
    expect((await trader('POST', '/policies/simulate', { agentId, operation: { kind: 'fee_claim' } })).status).toBe(403)
  })
})

describe("the operator's agent card", () => {
  it("shows the agent's effective policy: the account's rules, then the agent's", async () => {
    const op = await app.account({ operator: true, name: 'ops' })
    const card = await op.api('GET', `/ops/agents/${agentId}`)
    expect(card.status).toBe(200)
    expect(card.body.policies.account).toMatchObject({ scope: 'account', rules: [{ name: 'no big swaps' }, { name: 'eth ok' }], pending: null })
    expect(card.body.policies.agent).toMatchObject({ scope: 'agent', agentId, rules: [{ name: 'ask for transfers' }, { name: 'mirrors stop' }] })
  })
})

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type Api, type TestApp } from './support/app.ts'
import { automationUntil } from './support/automations.ts'

/**
 * Owners' policies enforced in the wallet operation before anything is signed (docs/api.md,
 * "Policies"): a reject is a 422 `policy_violation` naming the rule (nothing recorded, no nonce
 * used), an account's reject wins over an agent's accept, an accept skips the guardrails' caps,
 * a require_approval waits for an owner and is evaluated again at approval, a transfer's
 * destination and a window's net spend across the account are matched. Real server, real anvil.
 */
let app: TestApp
let api: Api
const friend = '0x' + '5e'.repeat(20)
const q = (sql: string, params: unknown[] = []) => app.services.pool.query(sql, params).then((r) => r.rows)
const chain = () => app.services.chain!.publicClient
const nonceOf = (address: `0x${string}`) => chain().getTransactionCount({ address })
const opsOf = async (agentId: string) => Number((await q('select count(*)::int as n from wallet_op where agent_id = $1', [agentId]))[0]!.n)

async function newAgent(policy: object = {}, skills: string[] = []) {
  const res = await api('POST', '/agents', { name: 'ruled', model: 'gpt-4o-mini', skills, policy })
  expect(res.status, JSON.stringify(res.body)).toBe(201)
  expect((await api('POST', '/dev/faucet', { agentId: res.body.id, eth: '2', usdc: '100' })).status).toBe(200)
  return res.body as { id: string; walletAddress: `0x${string}` }
}
const swap = (agentId: string, amountIn = '0.001') => api('POST', '/swap/execute', { agentId, tokenIn: 'ETH', tokenOut: 'USDC', amountIn, slippageBps: 300 })
const putAccount = async (rules: unknown[]) => expect((await api('PUT', '/policies/account', { rules })).status).toBe(200)
const putAgent = async (agentId: string, rules: unknown[]) => expect((await api('PUT', `/agents/${agentId}/policy`, { rules })).status).toBe(200)

beforeAll(async () => {
  app = await startTestApp({ STARTER_CREDITS: '10000' }, { withChain: true })
  ;({ api } = await app.account())
}, 120_000)
afterAll(async () => {
  await app?.close()
})

describe('owner policies in the wallet operation', () => {
  it("a sale drops the seller's policy of the agent: the buyer's guardrails and account policy apply", async () => {
    const agent = await newAgent({ max_trade_usd: '0.5' })
    await putAgent(agent.id, [{ name: 'seller lets all through', action: 'accept', criteria: [] }])
    expect((await swap(agent.id)).status).toBe(200)
    const listing = await api('POST', '/market', { agentId: agent.id, priceCredits: 100 })
    expect(listing.status, JSON.stringify(listing.body)).toBe(201)
    const buyer = await app.account({ name: 'buyer' })
    expect((await buyer.api('POST', `/market/${listing.body.id}/buy`, undefined, { 'idempotency-key': 'policy-sale' })).status).toBe(200)
    expect(await q('select * from agent_owner_policy where agent_id = $1', [agent.id])).toEqual([])
    expect((await buyer.api('GET', `/agents/${agent.id}/policy`)).body).toMatchObject({ rules: [] })
    const refused = await buyer.api('POST', '/swap/execute', { agentId: agent.id, tokenIn: 'ETH', tokenOut: 'USDC', amountIn: '0.001', slippageBps: 300 })
    expect({ status: refused.status, code: refused.body.code }).toEqual({ status: 403, code: 'policy_violation' })
    expect(refused.body.error).toContain('"max_trade_usd"')
  })

  it('without a rule that matches, the guardrails decide and the answer says so', async () => {
    const agent = await newAgent()
    const res = await swap(agent.id)
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body).toMatchObject({ status: 'confirmed', policy: { decision: 'guardrails', rule: null } })
  })

  it("refuses a swap an account's reject matches with 422 naming the rule, before anything is recorded or signed; an agent's accept cannot override it", async () => {
    const agent = await newAgent()
    await putAgent(agent.id, [{ name: 'all swaps', action: 'accept', criteria: [{ type: 'operation', operations: ['swap'] }] }])
    await putAccount([{ name: 'no usdc buys', action: 'reject', criteria: [{ type: 'token', tokens: ['USDC'], side: 'out' }, { type: 'operation', operations: ['swap'] }] }])
    const [n0, ops0] = [await nonceOf(agent.walletAddress), await opsOf(agent.id)]
    const res = await swap(agent.id)
    expect(res.status, JSON.stringify(res.body)).toBe(422)
    expect(res.body.code).toBe('policy_violation')
    expect(res.body.error).toContain('"no usdc buys"')
    expect(res.body.error).toContain('account policy')
    expect(await nonceOf(agent.walletAddress)).toBe(n0)
    expect(await opsOf(agent.id)).toBe(ops0)
    await putAccount([])
  })

  it("an agent's accept skips the guardrails' caps (not the kill switch), and is written on the operation", async () => {
    const agent = await newAgent({ max_trade_usd: '0.5' })
    expect((await swap(agent.id)).body.code).toBe('policy_violation')
    await putAgent(agent.id, [{ name: 'small eth sells', action: 'accept', criteria: [{ type: 'token', tokens: ['ETH'], side: 'in' }, { type: 'usd_value', operator: 'lt', usd: '50' }] }])
    const res = await swap(agent.id)
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body).toMatchObject({ status: 'confirmed', policy: { decision: 'accept', rule: { name: 'small eth sells', scope: 'agent' } } })
    const [row] = await q(`select snapshot->'context'->'policy' as policy from actor where id = $1`, [res.body.id])
    expect(row!.policy).toMatchObject({ decision: 'accept', rule: { name: 'small eth sells', scope: 'agent' }, facts: { kind: 'swap', usdValue: res.body.valueInUsd } })
    expect((await api('PATCH', `/agents/${agent.id}`, { policy: { paused: true } })).status).toBe(200)
    const paused = await swap(agent.id)
    expect({ status: paused.status, code: paused.body.code }).toEqual({ status: 403, code: 'policy_violation' })
    expect(paused.body.error).toContain('"paused"')
  })

  it('a require_approval waits for an owner; a reject added meanwhile fails it at approval, nothing signed', async () => {
    const agent = await newAgent()
    await putAgent(agent.id, [{ name: 'ask for swaps', action: 'require_approval', criteria: [{ type: 'operation', operations: ['swap'] }] }])
    const n0 = await nonceOf(agent.walletAddress)
    const held = await swap(agent.id)
    expect(held.status, JSON.stringify(held.body)).toBe(202)
    expect(held.body).toMatchObject({ status: 'awaiting_approval', policy: { decision: 'require_approval', rule: { name: 'ask for swaps', scope: 'agent' } } })
    const approval = await api('GET', `/approvals/${held.body.id}`)
    expect(approval.body).toMatchObject({ status: 'pending', rule: { name: 'ask for swaps', scope: 'agent' } })
    await putAccount([{ name: 'freeze', action: 'reject', criteria: [] }])
    const decided = await api('POST', `/approvals/${held.body.id}/approve`, {})
    expect(decided.status, JSON.stringify(decided.body)).toBe(200)
    expect(decided.body.operation).toMatchObject({ status: 'failed', error: { code: 'policy_violation', message: expect.stringContaining('"freeze"') } })
    expect(await nonceOf(agent.walletAddress)).toBe(n0)
    await putAccount([])
  })

  it("matches a transfer's destination", async () => {
    const agent = await newAgent()
    expect((await api('POST', `/agents/${agent.id}/whitelist`, { address: friend })).status).toBe(201)
    await q(`update agent_whitelist set usable_at = now() - interval '1 second' where agent_id = $1`, [agent.id])
    await putAgent(agent.id, [{ name: 'not to friend', action: 'reject', criteria: [{ type: 'destination', addresses: [friend] }] }])
    const n0 = await nonceOf(agent.walletAddress)
    const res = await api('POST', '/wallet/transfer', { agentId: agent.id, to: friend, token: 'USDC', amount: '1' })
    expect({ status: res.status, code: res.body.code }).toEqual({ status: 422, code: 'policy_violation' })
    expect(res.body.error).toContain('"not to friend"')
    expect(await nonceOf(agent.walletAddress)).toBe(n0)
    await putAgent(agent.id, [])
    const ok = await api('POST', '/wallet/transfer', { agentId: agent.id, to: friend, token: 'USDC', amount: '1' })
    expect(ok.status, JSON.stringify(ok.body)).toBe(200)
    expect(ok.body).toMatchObject({ status: 'confirmed', policy: { decision: 'guardrails', rule: null } })
  })

  it('covers launches: a reject refuses one (nothing recorded), a require_approval holds a seed, a reject added meanwhile fails it at approval', async () => {
    const agent = await newAgent()
    const launch = (venue: string, body: object) => api('POST', `/launch/${venue}`, { agentId: agent.id, name: 'Ruled', ...body }, { 'idempotency-key': `launch-${Math.random()}` })
    await putAgent(agent.id, [{ name: 'no curves', action: 'reject', criteria: [{ type: 'operation', operations: ['launch'] }, { type: 'usd_value', operator: 'lte', usd: '0' }] }])
    const refused = await launch('venue-a', { symbol: 'NOPE', quote: 'ETH' })
    expect({ status: refused.status, code: refused.body.code }).toEqual({ status: 422, code: 'policy_violation' })
    expect(refused.body.error).toContain('"no curves"')
    expect(await q(`select count(*)::int as n from actor where kind = 'launch' and snapshot->'context'->>'agentId' = $1`, [agent.id])).toEqual([{ n: 0 }])
    await putAgent(agent.id, [{ name: 'ask for seeds', action: 'require_approval', criteria: [{ type: 'token', tokens: ['USDC'], side: 'in' }] }])
    const held = await launch('self-funded', { symbol: 'SEEDY', quote: 'USDC', seedAmount: '10' })
    expect(held.status, JSON.stringify(held.body)).toBe(202)
    expect(held.body).toMatchObject({ status: 'awaiting_approval', policy: { decision: 'require_approval', rule: { name: 'ask for seeds', scope: 'agent' } }, approval: { rule: { name: 'ask for seeds' } } })
    await putAccount([{ name: 'no launches now', action: 'reject', criteria: [{ type: 'operation', operations: ['launch'] }] }])
    const decided = await api('POST', `/approvals/${held.body.id}/approve`, {})
    expect(decided.status, JSON.stringify(decided.body)).toBe(200)
    expect(decided.body.operation).toMatchObject({ status: 'failed', error: { code: 'policy_violation', message: expect.stringContaining('"no launches now"') } })
    expect(await q('select count(*)::int as n from chain_tx where agent_id = $1', [agent.id])).toEqual([{ n: 0 }])
    await putAccount([])
  })

  it("a mirror's copies are mirror_copy operations started by a mirror: a reject of them refuses the copy, nothing signed, the leader's swap untouched", async () => {
    const leader = await newAgent()
    const follower = await newAgent({}, ['trading'])
    expect((await api('POST', `/agents/${follower.id}/start`)).status).toBe(200)
    const created = await api('POST', '/automations', { agent_id: follower.id, name: 'copy', kind: 'mirror', mirror: { leaderAgentId: leader.id, ratio: 0.5, maxPerTradeUsd: '1000', maxDelaySeconds: 600 } })
    expect(created.status, JSON.stringify(created.body)).toBe(201)
    await putAccount([{ name: 'no copies', action: 'reject', criteria: [{ type: 'operation', operations: ['mirror_copy'] }, { type: 'initiator', initiators: ['mirror'] }] }])
    const before = await q('select count(*)::int as n from chain_tx where agent_id = $1', [follower.id])
    const led = await swap(leader.id, '0.002')
    expect(led.body).toMatchObject({ status: 'confirmed', policy: { decision: 'guardrails' } })
    const done = await automationUntil(api, created.body.id, (a) => a.firings.length >= 1)
    expect(done.firings[0]).toMatchObject({ source: 'leader_swap', outcome: 'failed' })
    expect(done.firings[0].reason).toMatch(/policy_violation/)
    expect(done.firings[0].reason).toContain('"no copies"')
    expect(await q('select count(*)::int as n from chain_tx where agent_id = $1', [follower.id])).toEqual(before)
    expect((await api('DELETE', `/automations/${created.body.id}`)).status).toBe(200)
    await putAccount([])
  })

  it("counts a window's net spend across the account's agents", async () => {
    // An account of its own: the swaps above count toward the first account's window.
    const first0 = api
    ;({ api } = await app.account({ name: 'budgeted' }))
    const [a, b] = [await newAgent(), await newAgent()]
    const first = await swap(a.id, '0.002')
    expect(first.status, JSON.stringify(first.body)).toBe(200)
    const spent = Number(first.body.valueInUsd)
    // The account may spend a little more than the first swap over the hour: the second agent's swap of the same size passes it.
    await putAccount([{ name: 'hourly budget', action: 'reject', criteria: [{ type: 'net_usd_window', scope: 'account', windowSeconds: 3600, operator: 'gt', usd: (spent * 1.5).toFixed(2) }] }])
    const second = await swap(b.id, '0.002')
    expect({ status: second.status, code: second.body.code }).toEqual({ status: 422, code: 'policy_violation' })
    expect(second.body.error).toContain('"hourly budget"')
    // A smaller one fits the budget.
    const small = await swap(b.id, '0.0002')
    expect(small.status, JSON.stringify(small.body)).toBe(200)
    api = first0
  })
})

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type Api, type TestApp } from './support/app.ts'
import { automationUntil } from './support/automations.ts'

/**
 * Copy trading on the real app, Postgres and anvil: a mirror repeats each confirmed swap of its
 * leader at its ratio as the follower's own swap (a child of the mirror, one per leader swap),
 * refuses (and reports) a copy over its per-trade cap, and is refused at creation when it would
 * copy its own copies or when another account's agent does not allow copying.
 */
let app: TestApp
let api: Api

const q = async (sql: string, values: unknown[] = []) => (await app.services.pool.query(sql, values)).rows
const WIDE = { max_trade_usd: '1000000', max_daily_usd: '10000000', max_price_impact_bps: 5000 }

async function agent(a: Api, name: string, usdc: string, policy?: object) {
  const created = await a('POST', '/agents', { name, skills: ['trading'], ...(policy ? { policy } : {}) })
  expect(created.status, JSON.stringify(created.body)).toBe(201)
  expect((await a('POST', '/dev/faucet', { agentId: created.body.id, eth: '2', usdc })).status).toBe(200)
  expect((await a('POST', `/agents/${created.body.id}/start`)).status).toBe(200)
  return created.body.id as string
}
const mirror = (agentId: string, leaderAgentId: string, extra: object = {}) =>
  ({ agent_id: agentId, name: 'copy', kind: 'mirror', mirror: { leaderAgentId, ratio: 0.5, maxPerTradeUsd: '60', maxDelaySeconds: 600, ...extra } })

beforeAll(async () => {
  app = await startTestApp({ RATE_LIMIT_PER_KEY: '1000000', RATE_LIMIT_PER_IP: '1000000' }, { withChain: true })
  ;({ api } = await app.account())
}, 120_000)
afterAll(async () => {
  await app?.close()
})

describe('mirror (copy trading)', () => {
  it('copies 3 leader swaps at ratio 0.5 and refuses the one over its cap', { timeout: 180_000 }, async () => {
    const leader = await agent(api, 'leader', '100000', WIDE)
    const follower = await agent(api, 'follower', '5000', WIDE)
    const created = await api('POST', '/automations', mirror(follower, leader, { tokens: ['USDC', 'ETH'] }))
    expect(created.status, JSON.stringify(created.body)).toBe(201)
    expect(created.body).toMatchObject({ kind: 'mirror', status: 'armed', triggerType: 'leader_swap', leaderAgentId: leader, ratio: 0.5, maxPerTradeUsd: '60', lastLeaderSwap: null })

    const leaderSwaps: string[] = []
    for (const amountIn of ['20', '40', '60', '200']) {
      const res = await api('POST', '/swap/execute', { agentId: leader, tokenIn: 'USDC', tokenOut: 'ETH', amountIn, slippageBps: 5000 })
      expect(res.body.status, JSON.stringify(res.body)).toBe('confirmed')
      leaderSwaps.push(res.body.id)
    }
    const done = await automationUntil(api, created.body.id, (a) => a.firings.length >= 4 && a.status === 'armed', 120_000)
    const byLeaderSwap = new Map(done.firings.map((f: any) => [f.leaderSwapId, f]))
    expect([...byLeaderSwap.keys()].sort()).toEqual([...leaderSwaps].sort())
    for (const id of leaderSwaps.slice(0, 3)) expect(byLeaderSwap.get(id)).toMatchObject({ source: 'leader_swap', outcome: 'ok', txHash: expect.stringMatching(/^0x/) })
    const refused = byLeaderSwap.get(leaderSwaps[3]) as any
    expect(refused).toMatchObject({ outcome: 'failed', childId: null })
    expect(refused.reason).toMatch(/^mirror_over_max_per_trade: .*refused, not capped/)
    expect(done.lastLeaderSwap).toMatchObject({ id: leaderSwaps[3], symbolIn: 'USDC', symbolOut: 'ETH', amountIn: '200000000' })

    // The follower's swaps: children of the mirror, one per copied leader swap, each half the leader's amount.
    const amount = async (id: string) => (await q(`select snapshot->'context'->'params'->>'amountIn' as a from actor where id = $1`, [id]))[0]!.a as string
    const children = await q(`select w.id from wallet_op w where w.parent_id = $1`, [created.body.id])
    expect(children).toHaveLength(3)
    const halves = await Promise.all(leaderSwaps.slice(0, 3).map(async (id) => (BigInt(await amount(id)) / 2n).toString()))
    const copied = await Promise.all(children.map((c: any) => amount(c.id)))
    expect(copied.sort()).toEqual(halves.sort())
    expect(halves).toEqual(['10000000', '20000000', '30000000'])
    const statuses = await q(`select status from actor where id = any($1::text[])`, [children.map((c: any) => c.id)])
    expect(statuses.map((s: any) => s.status)).toEqual(['confirmed', 'confirmed', 'confirmed'])
  })

  it('refuses a cycle, a mirror of itself, and another account\'s agent that does not allow copying', { timeout: 60_000 }, async () => {
    const a = await agent(api, 'a', '10')
    const b = await agent(api, 'b', '10')
    expect((await api('POST', '/automations', mirror(b, a))).status).toBe(201)
    const cycle = await api('POST', '/automations', mirror(a, b))
    expect([cycle.status, cycle.body.code, Object.keys(cycle.body.field_errors ?? {})]).toEqual([422, 'mirror_cycle', ['mirror.leaderAgentId']])
    const self = await api('POST', '/automations', mirror(a, a))
    expect([self.status, self.body.code]).toEqual([422, 'mirror_cycle'])

    const other = await app.account({ name: 'other' })
    const theirs = await agent(other.api, 'theirs', '10')
    // Not public: unknown to this account.
    const hidden = await api('POST', '/automations', mirror(a, theirs))
    expect([hidden.status, Object.keys(hidden.body.field_errors ?? {})]).toEqual([422, ['mirror.leaderAgentId']])
    expect((await other.api('PATCH', `/agents/${theirs}`, { is_public: true })).status).toBe(200)
    const refused = await api('POST', '/automations', mirror(a, theirs))
    expect([refused.status, refused.body.code]).toEqual([403, 'copy_not_allowed'])
    const allowed = await other.api('PATCH', `/agents/${theirs}`, { allow_copy: true })
    expect([allowed.status, allowed.body.allowCopy]).toEqual([200, true])
    expect((await api('POST', '/automations', mirror(a, theirs))).status).toBe(201)
  })
})

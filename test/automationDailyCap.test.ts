import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type Api, type TestApp } from './support/app.ts'
import { waitFor } from './support/waitFor.ts'

/**
 * Many automations of one agent due at the same moment race for its daily cap: the cap is
 * checked and reserved under one lock per agent, so together they never spend past it.
 */
let app: TestApp
let api: Api
const q = async (sql: string, values: unknown[] = []) => (await app.services.pool.query(sql, values)).rows

beforeAll(async () => {
  // The test polls ten automations every 25 ms: the per-key limit (1,200 a minute) would answer 429 within seconds.
  app = await startTestApp({ AUTOMATION_MIN_INTERVAL_SECONDS: '1', RATE_LIMIT_PER_KEY: '1000000' }, { withChain: true })
  ;({ api } = await app.account())
})
afterAll(async () => {
  await app?.close()
})

describe("an agent's daily cap", () => {
  it('holds against 10 automations firing at the same moment: the swaps that fit go through, the others fail naming the cap', async () => {
    const probe = (await api('POST', '/agents', { name: 'probe', skills: ['trading'] })).body.id
    const quote = (await api('POST', '/swap/quote', { agentId: probe, tokenIn: 'ETH', tokenOut: 'USDC', amountIn: '0.002' })).body
    // The cap fits two of these swaps, not three.
    const cap = (Number(quote.valueInUsd) * 2.5).toFixed(2)
    const agent = (await api('POST', '/agents', { name: 'capped', skills: ['trading'], policy: { max_daily_usd: cap } })).body
    expect(agent.policy?.max_daily_usd ?? agent.policy?.maxDailyUsd).toBeDefined()
    expect((await api('POST', '/dev/faucet', { agentId: agent.id, eth: '2' })).status).toBe(200)
    expect((await api('POST', `/agents/${agent.id}/start`)).status).toBe(200)

    const at = new Date(Date.now() + 4_000).toISOString()
    const ids: string[] = []
    for (let i = 0; i < 10; i++) {
      const created = await api('POST', '/automations', {
        agent_id: agent.id, name: `racer ${i}`, max_firings: 1,
        trigger: { type: 'interval', everySeconds: 3600, startAt: at },
        action: { type: 'tool_call', tool: 'swap_execute', args: { tokenIn: 'ETH', tokenOut: 'USDC', amountIn: '0.002' } },
      })
      expect(created.status, JSON.stringify(created.body)).toBe(201)
      ids.push(created.body.id)
    }
    let all: any[] = []
    await waitFor(async () => {
      all = await Promise.all(
        ids.map(async (id) => {
          const res = await api('GET', `/automations/${id}`)
          if (res.status !== 200) throw new Error(`GET /automations/${id} answered ${res.status}: ${JSON.stringify(res.body)}`)
          return res.body
        }),
      )
      return all.every((a) => a.firings.some((f: { outcome: string }) => f.outcome !== 'skipped'))
    }, 60_000)
    const outcomes = all.map((a) => a.firings.find((f: { outcome: string }) => f.outcome !== 'skipped'))
    // They fired together: one firing each, all for the same tick, ended within seconds of each other.
    expect(all.every((a) => a.firings.length === 1)).toBe(true)
    const ends = outcomes.map((f) => Date.parse(f.at))
    expect(Math.max(...ends) - Math.min(...ends)).toBeLessThan(10_000)
    expect(outcomes.filter((f) => f.outcome === 'ok')).toHaveLength(2)
    for (const f of outcomes.filter((o) => o.outcome !== 'ok')) expect(f.reason, JSON.stringify(f)).toMatch(/^policy_violation: .* in the last 24/)
    // On chain and in the ledger of spends: two swaps, within the cap.
    expect((await q(`select count(*)::int as n from chain_tx where agent_id = $1`, [agent.id]))[0].n).toBe(2)
    const [{ spent }] = await q(
      `select coalesce(sum(w.usd_value), 0)::float8 as spent from wallet_op w join actor x on x.id = w.id where w.agent_id = $1 and x.status = 'confirmed'`, [agent.id])
    expect(spent).toBeLessThanOrEqual(Number(cap))
  })
})

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type TestApp } from './support/app.ts'
import { NotFoundError } from '../src/domain/errors.ts'

let app: TestApp
const q = (sql: string, params: unknown[] = []) => app.services.pool.query(sql, params).then((r) => r.rows)

beforeAll(async () => {
  app = await startTestApp()
})
afterAll(() => app.close())

async function newAgent() {
  const { accountId, api } = await app.account()
  const res = await api('POST', '/agents', { name: 'repo', model: 'gpt-4o-mini', skills: [], policy: { max_trade_usd: '10' } })
  expect(res.status).toBe(201)
  return { accountId, agent: res.body as { id: string; walletAddress: string } }
}

describe('agents repository', () => {
  it("reads an agent of its account with its actor's status; another account's agent is not found", async () => {
    const { accountId, agent } = await newAgent()
    const other = await app.account()
    const repo = app.services.agentsRepository

    const found = await repo.getOwned(accountId, agent.id)
    expect(found).toMatchObject({ id: agent.id, accountId, name: 'repo', walletAddress: agent.walletAddress, status: 'stopped', pending: [] })
    expect(found.policy.max_trade_usd).toBe('10')
    expect(found.createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)

    expect(await repo.findOwned(other.accountId, agent.id)).toBeUndefined()
    await expect(repo.getOwned(other.accountId, agent.id)).rejects.toBeInstanceOf(NotFoundError)
    await expect(repo.assertOwned(other.accountId, agent.id)).rejects.toBeInstanceOf(NotFoundError)
    await expect(repo.assertOwned(accountId, agent.id)).resolves.toBeUndefined()
    expect((await repo.list(other.accountId, { limit: 10 })).map((a) => a.id)).not.toContain(agent.id)
    expect((await repo.list(accountId, { limit: 10 })).map((a) => a.id)).toEqual([agent.id])
  })

  it('lays a matured pending change over the policy and payout wallet; one still in its hold stays pending', async () => {
    const { accountId, agent } = await newAgent()
    const payout = '0x5555555555555555555555555555555555555555'
    await q(
      `insert into agent_pending_change (agent_id, field, value, effective_at) values
         ($1, 'max_trade_usd', '"500"', now() - interval '1 second'),
         ($1, 'payout_wallet', $2::jsonb, now() - interval '1 second'),
         ($1, 'max_daily_usd', '"900"', now() + interval '1 hour')`,
      [agent.id, JSON.stringify(payout)],
    )
    const found = await app.services.agentsRepository.getOwned(accountId, agent.id)
    expect(found.policy.max_trade_usd).toBe('500')
    expect(found.payoutWallet).toBe(payout)
    expect(found.policy.max_daily_usd).not.toBe('900')
    expect(found.pending).toEqual([{ field: 'max_daily_usd', value: '900', effective_at: expect.any(String) }])
    // The stored row is untouched: the next update folds the matured change in.
    expect(await q('select policy->>$2 as v, payout_wallet from agent where id = $1', [agent.id, 'max_trade_usd'])).toEqual([
      { v: '10', payout_wallet: null },
    ])
  })
})

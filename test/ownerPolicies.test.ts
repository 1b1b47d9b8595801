import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { apiClient, startTestApp, type Api, type TestApp } from './support/app.ts'

/**
 * Owners' policies stored and exposed (docs/api.md, "Policies"): GET/PUT /policies/account and
 * /agents/:id/policy (scope admin), 422 naming the field of an invalid policy, a tightening
 * applied at once and a loosening held for WHITELIST_HOLD_SECONDS and journaled, as a
 * guardrail loosening is.
 */
const HOLD_SECONDS = 2

let app: TestApp
let owner: Api
let trader: Api
let ownerKeyId: string
let accountId: string
const q = (sql: string, params: unknown[] = []) => app.services.pool.query(sql, params).then((r) => r.rows)
const A = '0x' + 'ab'.repeat(20)
const cap = (usd: string, name = 'cap') => ({ name, action: 'reject', criteria: [{ type: 'usd_value', operator: 'gt', usd }] })

beforeAll(async () => {
  app = await startTestApp({ WHITELIST_HOLD_SECONDS: String(HOLD_SECONDS) })
  const acct = await app.account()
  owner = acct.api
  accountId = acct.accountId
  ownerKeyId = (await owner('GET', '/keys')).body.keys[0].id
  trader = apiClient(`${app.url}/api/v1`, (await owner('POST', '/keys', { name: 'model', scopes: ['read', 'trade'] })).body.key)
}, 120_000)
afterAll(async () => {
  await app?.close()
})

async function newAgent() {
  const res = await owner('POST', '/agents', { name: 'ruled', model: 'gpt-4o-mini', skills: [] })
  expect(res.status).toBe(201)
  return res.body.id as string
}

describe('owner policies: storage and routes', () => {
  it('answers no rules before any policy is set, and needs the admin scope to read or write', async () => {
    const agentId = await newAgent()
    expect((await owner('GET', '/policies/account')).body).toMatchObject({ scope: 'account', agentId: null, rules: [], pending: null, updatedAt: null })
    expect((await owner('GET', `/agents/${agentId}/policy`)).body).toMatchObject({ scope: 'agent', agentId, rules: [], pending: null })
    for (const [method, path] of [['GET', '/policies/account'], ['PUT', '/policies/account'], ['GET', `/agents/${agentId}/policy`], ['PUT', `/agents/${agentId}/policy`]] as const) {
      const res = await trader(method, path, method === 'PUT' ? { rules: [cap('1')] } : undefined)
      expect({ path, method, status: res.status, code: res.body.code }).toEqual({ path, method, status: 403, code: 'forbidden' })
    }
    expect(await q('select * from account_policy where account_id = $1', [accountId])).toEqual([])
    expect(await q('select * from agent_owner_policy where agent_id = $1', [agentId])).toEqual([])
  })

  it('answers 422 naming the field of an invalid policy, and stores nothing', async () => {
    const agentId = await newAgent()
    const cases: Array<[unknown, Record<string, unknown>]> = [
      [{ rules: [{ name: 'x', action: 'reject', criteria: [{ type: 'gas_price', gwei: 1 }] }] }, { 'rules.0.criteria.0.type': expect.stringContaining('Unknown criterion') }],
      [{ rules: [{ name: 'x', action: 'reject', criteria: [{ type: 'destination', addresses: ['0x1234'] }] }] }, { 'rules.0.criteria.0.addresses.0': expect.any(String) }],
      [{ rules: [{ name: 'x', action: 'reject', criteria: [{ type: 'time_of_day', fromUtc: '01:00', toUtc: '02:00' }, { type: 'time_of_day', fromUtc: '03:00', toUtc: '04:00' }] }] }, { 'rules.0.criteria.1': expect.stringContaining('never match') }],
      [{ rules: Array.from({ length: 101 }, (_, i) => cap('1', `r${i}`)) }, { rules: 'At most 100 rules.' }],
      [{ rules: [cap('1')], extra: true }, { extra: 'Unknown field.' }],
    ]
    for (const [body, fieldErrors] of cases) {
      for (const path of ['/policies/account', `/agents/${agentId}/policy`]) {
        const res = await owner('PUT', path, body)
        expect({ status: res.status, code: res.body.code, field_errors: res.body.field_errors }).toEqual({ status: 422, code: 'validation_failed', field_errors: fieldErrors })
      }
    }
    expect(await q('select * from account_policy where account_id = $1', [accountId])).toEqual([])
    expect(await q('select * from agent_owner_policy where agent_id = $1', [agentId])).toEqual([])
  })

  it("404s another account's agent or a non-uuid id", async () => {
    const other = await (await app.account({ name: 'other' })).api('POST', '/agents', { name: 'theirs', model: 'gpt-4o-mini', skills: [] })
    expect((await owner('GET', `/agents/${other.body.id}/policy`)).status).toBe(404)
    expect((await owner('PUT', `/agents/${other.body.id}/policy`, { rules: [] })).status).toBe(404)
    expect((await owner('GET', '/agents/nope/policy')).status).toBe(404)
    expect(await q('select * from agent_owner_policy where agent_id = $1', [other.body.id])).toEqual([])
  })

  it('applies a tightening at once, holds a loosening (its new rejects apply now) and journals both', async () => {
    const agentId = await newAgent()
    const path = `/agents/${agentId}/policy`
    const tight = await owner('PUT', path, { rules: [cap('100'), { name: 'friend', action: 'require_approval', criteria: [{ type: 'destination', addresses: [A] }] }] })
    expect(tight.status).toBe(200)
    expect(tight.body).toMatchObject({ scope: 'agent', agentId, rules: [cap('100'), { name: 'friend' }], pending: null })
    const t0 = Date.now()
    const next = { rules: [cap('1000'), { name: 'nights', action: 'reject', criteria: [{ type: 'time_of_day', fromUtc: '22:00', toUtc: '06:00' }] }] }
    const loose = await owner('PUT', path, next)
    expect(loose.status).toBe(200)
    // The raised cap and the removed approval wait; the new reject applies now beside the current rules.
    expect(loose.body.rules.map((r: { name: string }) => r.name)).toEqual(['cap', 'friend', 'nights'])
    expect(loose.body.rules[0]).toEqual(cap('100'))
    expect(loose.body.pending).toEqual({ rules: next.rules, effectiveAt: expect.any(String) })
    const effectiveAt = Date.parse(loose.body.pending.effectiveAt)
    expect(effectiveAt).toBeGreaterThanOrEqual(t0 + HOLD_SECONDS * 1000 - 1500)

    const audit = await owner('GET', `/agents/${agentId}/audit`)
    const actor = { type: 'key', keyId: ownerKeyId }
    expect(audit.body.entries.map((e: { action: string; actor: unknown }) => [e.action, e.actor])).toEqual([
      ['owner_policy.change', actor], ['owner_policy.change', actor], ['owner_policy.change', actor],
    ])
    expect(audit.body.entries[0]).toMatchObject({ after: { owner_policy: next }, effectiveAt: loose.body.pending.effectiveAt })
    expect(Date.parse(audit.body.entries[1].effectiveAt)).toBeLessThan(effectiveAt)

    // Journaled as a guardrail change is: account events (webhooks, GET /events) naming the scope.
    const events = await q(`select type, resource_kind, data from account_event where resource_id = $1 and data->>'change' = 'owner_policy.change' order by seq`, [agentId])
    expect(events.map((e) => [e.type, e.resource_kind, e.data.scope, e.data.agentId])).toEqual([
      ['guardrail.change_applied', 'agent', 'agent', agentId], ['guardrail.change_applied', 'agent', 'agent', agentId], ['guardrail.change_requested', 'agent', 'agent', agentId],
    ])
    expect(events[2]!.data).toMatchObject({ after: { owner_policy: next }, by: actor })

    // After the hold the whole new policy applies, by the database clock.
    await new Promise((r) => setTimeout(r, Math.max(0, effectiveAt - Date.now()) + 300))
    expect((await owner('GET', path)).body).toMatchObject({ rules: next.rules, pending: null })
  })

  it('lets the latest request win: a tightening during a hold drops the held loosening, journaled as pending.cancel', async () => {
    await owner('PUT', '/policies/account', { rules: [cap('50')] })
    const held = await owner('PUT', '/policies/account', { rules: [] })
    expect(held.body).toMatchObject({ rules: [cap('50')], pending: { rules: [] } })
    const tighter = await owner('PUT', '/policies/account', { rules: [cap('50'), cap('10', 'small')] })
    expect(tighter.body).toMatchObject({ rules: [cap('50'), cap('10', 'small')], pending: null })
    const rows = await q(`select action, before, after from audit_log where subject_id = $1 order by id`, [accountId])
    expect(rows.map((r) => r.action)).toEqual(['owner_policy.change', 'owner_policy.change', 'pending.cancel', 'owner_policy.change'])
    expect(rows[2]!.before).toEqual({ owner_policy: { rules: [] } })
    const events = await q(`select type, resource_kind, data from account_event where resource_id = $1 and data->>'change' = 'owner_policy.change' order by seq`, [accountId])
    expect(events.map((e) => [e.type, e.resource_kind, e.data.scope, e.data.agentId])).toEqual([
      ['guardrail.change_applied', 'account', 'account', null], ['guardrail.change_requested', 'account', 'account', null], ['guardrail.change_applied', 'account', 'account', null],
    ])
    const [stored] = await q('select policy, pending from account_policy where account_id = $1', [accountId])
    expect(stored).toEqual({ policy: { rules: [cap('50'), cap('10', 'small')] }, pending: null })
  })
})

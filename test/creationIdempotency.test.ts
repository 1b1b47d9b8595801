import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { randomUUID } from 'node:crypto'
import { apiClient, startTestApp, type Api, type TestApp } from './support/app.ts'

// Idempotency-Key on every POST that creates something: the same key and body answer the first
// answer again (Idempotent-Replayed, nothing created twice), another body is 422
// idempotency_key_reused. Every POST the document answers 201 Created must declare the key.
let app: TestApp
let alice: { accountId: string; apiKey: string; api: Api }
let bob: { accountId: string; apiKey: string; api: Api }
/** The POSTs the document answers 201 Created, with whether they declare Idempotency-Key. */
let created: Array<{ path: string; keyed: boolean }>
let agentId: string
let listingId: string

const agentBody = (name: string) => ({ name, model: 'gpt-4o-mini', skills: ['trading'] })

beforeAll(async () => {
  app = await startTestApp({}, { withChain: true })
  alice = await app.account({ name: 'alice' })
  bob = await app.account({ name: 'bob' })
  const doc = (await (await fetch(`${app.url}/api/v1/openapi.json`)).json()) as { paths: Record<string, Record<string, any>> }
  created = Object.entries(doc.paths).flatMap(([path, item]) =>
    item.post?.responses?.['201'] ? [{ path, keyed: (item.post.parameters ?? []).some((p: { name: string }) => p.name === 'Idempotency-Key') }] : [],
  )
  agentId = (await alice.api('POST', '/agents', agentBody('base'))).body.id
  const sold = (await alice.api('POST', '/agents', agentBody('for sale'))).body.id
  const listing = await alice.api('POST', '/market', { agentId: sold, priceCredits: 5000 })
  expect(listing.status, JSON.stringify(listing.body)).toBe(201)
  listingId = listing.body.id
}, 120_000)
afterAll(async () => {
  await app?.close()
})

type Creation = {
  path: () => string
  /** Who creates (bob bids on alice's listing). */
  api?: () => Api
  body: (n: number) => Record<string, unknown>
  /** The ids of what exists, to show nothing was created twice. */
  count: (api: Api) => Promise<number>
}

/** Every POST of the document that answers 201 Created, with a body that creates and a way to count what it made. */
const CREATIONS: Record<string, Creation> = {
  '/agents': { path: () => '/agents', body: (n) => agentBody(`made-${n}`), count: async (api) => (await api('GET', '/agents?limit=100')).body.agents.length },
  '/keys': { path: () => '/keys', body: (n) => ({ name: `key-${n}`, scopes: ['read'] }), count: async (api) => (await api('GET', '/keys?limit=100')).body.keys.length },
  '/webhooks': {
    path: () => '/webhooks',
    body: (n) => ({ url: `http://127.0.0.1:9/hook-${n}`, events: ['swap.confirmed'] }),
    count: async (api) => (await api('GET', '/webhooks')).body.webhooks.length,
  },
  '/skills/custom': {
    path: () => '/skills/custom',
    body: (n) => ({ slug: `skill-${n}`, name: `Skill ${n}`, description: 'A skill.', instructions: 'Do it.', tools: ['swap_quote'], tags: [] }),
    count: async (api) => (await api('GET', '/skills/custom?limit=100')).body.skills.length,
  },
  '/agents/{id}/whitelist': {
    path: () => `/agents/${agentId}/whitelist`,
    body: (n) => ({ address: `0x${String(n).padStart(40, '7')}` }),
    count: async (api) => (await api('GET', `/agents/${agentId}/whitelist`)).body.whitelist.length,
  },
  '/market': {
    path: () => '/market',
    // Each try lists a fresh agent (an agent is listed once).
    body: (n) => ({ agentId: fresh.get(n)!, priceCredits: 100 + n }),
    count: async (api) => (await api('GET', '/market/history?limit=100')).body.listings.length,
  },
  '/market/{id}/bids': {
    path: () => `/market/${listingId}/bids`,
    api: () => bob.api,
    body: (n) => ({ credits: 100 + n }),
    count: async (api) => (await api('GET', '/market/bids?limit=100')).body.bids.length,
  },
}
/** Agents to list, made before each listing's try. */
const fresh = new Map<number, string>()

describe('Idempotency-Key on creations', () => {
  it('is declared on every POST the document answers 201 Created', () => {
    expect(created.length).toBeGreaterThan(8)
    expect(created.filter((op) => !op.keyed).map((op) => op.path)).toEqual([])
  })

  it('same key and body: the first answer again with Idempotent-Replayed, one resource; another body: 422 idempotency_key_reused', async () => {
    // Those honoured before have tests of their own (test/paperAgents.test.ts, test/automations.test.ts).
    const untested = created.map((op) => op.path).filter((p) => !(p in CREATIONS) && !['/agents/{id}/clone', '/agents/{id}/paper/deposit', '/automations'].includes(p))
    expect(untested).toEqual([])
    let n = 0
    for (const [route, c] of Object.entries(CREATIONS)) {
      const api = c.api?.() ?? alice.api
      const key = randomUUID()
      const [one, two] = [++n, ++n]
      for (const i of [one, two]) if (route === '/market') fresh.set(i, (await alice.api('POST', '/agents', agentBody(`listed-${i}`))).body.id)
      const before = await c.count(api)
      const first = await api('POST', c.path(), c.body(one), { 'Idempotency-Key': key })
      expect({ route, status: first.status }, JSON.stringify(first.body)).toEqual({ route, status: 201 })
      const again = await api('POST', c.path(), c.body(one), { 'Idempotency-Key': key })
      expect({ route, status: again.status, replayed: again.headers.get('idempotent-replayed'), id: again.body.id }).toEqual({ route, status: 201, replayed: 'true', id: first.body.id })
      // The first answer, verbatim but for meta (a key's value or a webhook's secret included).
      const { meta: _m1, ...firstBody } = first.body
      const { meta: _m2, ...againBody } = again.body
      expect(againBody).toEqual(firstBody)
      const other = await api('POST', c.path(), c.body(two), { 'Idempotency-Key': key })
      expect({ route, status: other.status, code: other.body.code }).toEqual({ route, status: 422, code: 'idempotency_key_reused' })
      expect({ route, count: await c.count(api) }).toEqual({ route, count: before + 1 })
      // Without a key each request creates.
      const unkeyed = await api('POST', c.path(), c.body(two))
      expect({ route, status: unkeyed.status }).toEqual({ route, status: 201 })
      expect({ route, count: await c.count(api) }).toEqual({ route, count: before + 2 })
    }
  })

  it('a key is the account\'s: the same key from another account creates its own', async () => {
    const key = randomUUID()
    const a = await alice.api('POST', '/keys', { name: 'k', scopes: ['read'] }, { 'Idempotency-Key': key })
    const b = await bob.api('POST', '/keys', { name: 'k', scopes: ['read'] }, { 'Idempotency-Key': key })
    expect([a.status, b.status, b.headers.get('idempotent-replayed')]).toEqual([201, 201, null])
    expect(b.body.id).not.toBe(a.body.id)
    expect((await apiClient(`${app.url}/api/v1`, b.body.key)('GET', '/me')).body.id).toBe(bob.accountId)
  })

  it("a stored answer holding a secret goes with its key: once the sweep drops keys past 48 hours, nothing of it is left and the key creates anew", async () => {
    const key = randomUUID()
    const first = await alice.api('POST', '/webhooks', { url: 'http://127.0.0.1:9/swept', events: ['swap.confirmed'] }, { 'Idempotency-Key': key })
    expect(first.status).toBe(201)
    const stored = async () =>
      (await app.services.pool.query<{ n: number }>(`select count(*)::int as n from idempotency_key where account_id = $1 and response_body::text like '%' || $2 || '%'`, [alice.accountId, first.body.secret])).rows[0]!.n
    expect(await stored()).toBe(1)
    await app.services.pool.query(`update idempotency_key set created_at = now() - interval '49 hours' where account_id = $1 and key = $2`, [alice.accountId, key])
    await app.services.core.idempotencyKeys.sweep()
    expect(await stored()).toBe(0)
    const after = await alice.api('POST', '/webhooks', { url: 'http://127.0.0.1:9/swept', events: ['swap.confirmed'] }, { 'Idempotency-Key': key })
    expect([after.status, after.headers.get('idempotent-replayed'), after.body.id === first.body.id]).toEqual([201, null, false])
  })
})

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { apiClient, startTestApp, type Api, type TestApp } from './support/app.ts'
import { grantCredits } from '../src/domain/billing/grantCredits.ts'
import { reserveCredits, settleReservation } from '../src/domain/billing/creditReservations.ts'

let app: TestApp
let alice: { accountId: string; apiKey: string; api: Api }
let bob: { accountId: string; apiKey: string; api: Api }

beforeAll(async () => {
  app = await startTestApp({
    STARTER_CREDITS: '1000',
    // Configured but never called here: neither value may show in any answer.
    OPENAI_BASE_URL: 'http://provider-secret.example/v1',
    OPENAI_API_KEY: 'sk-very-secret-provider-key',
  })
  alice = await app.account({ name: 'alice' })
  bob = await app.account({ name: 'bob' })
  const deps = { credits: app.services.credits }
  for (let i = 0; i < 24; i++) await grantCredits(deps, { accountId: alice.accountId, credits: 10 + i, ref: `promo-${i}` })
  for (const [ref, charge] of [['effect-a', 120], ['effect-b', 30]] as const) {
    const r = await reserveCredits(deps, { accountId: alice.accountId, credits: 200, ref })
    await settleReservation(deps, r, { credits: charge, ref })
  }
  await reserveCredits(deps, { accountId: alice.accountId, credits: 75, ref: 'in-flight' })
})
afterAll(() => app.close())

describe('GET /models', () => {
  it('lists the catalog entries with prices, limits, tools and the one default; never the provider URL or key', async () => {
    const res = await apiClient(`${app.url}/api/v1`)('GET', '/models')
    expect(res.status).toBe(200)
    expect(res.body.models.length).toBeGreaterThan(1)
    for (const m of res.body.models) {
      expect(Object.keys(m).sort()).toEqual(
        ['contextWindow', 'default', 'id', 'inputCreditsPerMillion', 'name', 'outputCreditsPerMillion', 'providerModel', 'supportsTools'],
      )
    }
    expect(res.body.models.filter((m: { default: boolean }) => m.default)).toEqual([
      { id: 'gpt-4o-mini', name: 'GPT-4o mini', providerModel: 'gpt-4o-mini', inputCreditsPerMillion: 150, outputCreditsPerMillion: 600, contextWindow: 128000, supportsTools: true, default: true },
    ])
    expect(app.services.defaultModel.id).toBe('gpt-4o-mini')
    const text = JSON.stringify(res.body)
    expect(text).not.toContain('provider-secret')
    expect(text).not.toContain('sk-very-secret')
  })
})

describe('GET /billing', () => {
  it('shows credits, reserved, spent today and this month, and the rate', async () => {
    const res = await alice.api('GET', '/billing')
    expect(res.status).toBe(200)
    const granted = 1000 + Array.from({ length: 24 }, (_, i) => 10 + i).reduce((a, b) => a + b, 0)
    expect(res.body).toEqual({
      credits: granted - 150,
      reserved: 75,
      spentToday: 150,
      spentThisMonth: 150,
      creditsPerUsd: 1000,
      meta: { requestId: expect.any(String), timestamp: expect.any(String) },
    })
    expect((await bob.api('GET', '/billing')).body).toMatchObject({ credits: 1000, reserved: 0, spentToday: 0, spentThisMonth: 0 })
  })

  it('works with a read-only key, needs credentials and takes no query', async () => {
    const key = await alice.api('POST', '/keys', { name: 'ro', scopes: ['read'] })
    const ro = apiClient(`${app.url}/api/v1`, key.body.key)
    expect((await ro('GET', '/billing')).status).toBe(200)
    expect((await ro('GET', '/billing/transactions')).status).toBe(200)
    expect((await apiClient(`${app.url}/api/v1`)('GET', '/billing')).status).toBe(401)
    const q = await alice.api('GET', '/billing?verbose=1')
    expect(q.status).toBe(422)
    expect(q.body.field_errors).toEqual({ verbose: expect.any(String) })
  })
})

describe('GET /billing/transactions', () => {
  it('pages the whole ledger newest first with opaque cursors', async () => {
    const seen: Array<{ id: string; createdAt: string; kind: string; credits: number; balanceAfter: number; ref: string }> = []
    let cursor: string | null = null
    let pages = 0
    do {
      const res = await alice.api('GET', `/billing/transactions?limit=10${cursor ? `&cursor=${cursor}` : ''}`)
      expect(res.status).toBe(200)
      expect(Object.keys(res.body).sort()).toEqual(['meta', 'nextCursor', 'transactions'])
      seen.push(...res.body.transactions)
      cursor = res.body.nextCursor
      pages++
    } while (cursor)
    expect(pages).toBe(3) // 1 starter + 24 grants + 2 charges = 27 entries
    expect(seen).toHaveLength(27)
    expect(new Set(seen.map((t) => t.id)).size).toBe(27)
    expect(Object.keys(seen[0]!).sort()).toEqual(['balanceAfter', 'createdAt', 'credits', 'id', 'kind', 'ref'])
    // Newest first: the last charge on top, the starter grant (ref = account id) at the bottom.
    expect(seen[0]).toMatchObject({ kind: 'model_usage', credits: -30, ref: 'effect-b' })
    expect(seen.at(-1)).toMatchObject({ kind: 'grant', credits: 1000, balanceAfter: 1000, ref: alice.accountId })
    for (let i = 1; i < seen.length; i++) expect(seen[i - 1]!.balanceAfter - seen[i - 1]!.credits).toBe(seen[i]!.balanceAfter)
  })

  it('filters by ?kind= and refuses an unknown kind, a bad cursor or limit with field errors', async () => {
    const usage = await alice.api('GET', '/billing/transactions?kind=model_usage')
    expect(usage.body.transactions.map((t: { ref: string; credits: number }) => [t.ref, t.credits])).toEqual([['effect-b', -30], ['effect-a', -120]])
    expect(usage.body.nextCursor).toBeNull()
    const grants = await alice.api('GET', '/billing/transactions?kind=grant&limit=20')
    expect(grants.body.transactions).toHaveLength(20)
    const rest = await alice.api('GET', `/billing/transactions?kind=grant&limit=20&cursor=${grants.body.nextCursor}`)
    expect(rest.body.transactions).toHaveLength(5)
    expect(rest.body.transactions.every((t: { kind: string }) => t.kind === 'grant')).toBe(true)
    expect((await alice.api('GET', '/billing/transactions?kind=deposit')).body.transactions).toEqual([])

    for (const [query, field] of [['kind=bonus', 'kind'], ['cursor=nope', 'cursor'], ['limit=0', 'limit'], ['limit=101', 'limit'], ['page=2', 'page']]) {
      const res = await alice.api('GET', `/billing/transactions?${query}`)
      expect(res.status, query).toBe(422)
      expect(res.body.code).toBe('validation_failed')
      expect(Object.keys(res.body.field_errors)).toEqual([field])
    }
  })

  it('another account sees only its own entries', async () => {
    const res = await bob.api('GET', '/billing/transactions')
    expect(res.body.transactions).toEqual([
      { id: expect.any(String), kind: 'grant', credits: 1000, balanceAfter: 1000, ref: bob.accountId, createdAt: expect.any(String) },
    ])
    // Alice's cursor cannot reach into Alice's ledger from Bob's key.
    const page = await alice.api('GET', '/billing/transactions?limit=1')
    const other = await bob.api('GET', `/billing/transactions?cursor=${page.body.nextCursor}`)
    expect(other.body.transactions.every((t: { ref: string }) => t.ref === bob.accountId)).toBe(true)
  })

  it('is in the OpenAPI document with its query parameters', async () => {
    const doc = (await apiClient(`${app.url}/api/v1`)('GET', '/openapi.json')).body
    expect(doc.paths['/billing'].get['x-scope']).toBe('read')
    expect(doc.paths['/billing/transactions'].get.parameters.map((p: { name: string }) => p.name)).toEqual(['limit', 'cursor', 'kind'])
  })
})

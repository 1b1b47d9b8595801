import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { createSiweMessage } from 'viem/siwe'
import { apiClient, startTestApp, type Api, type TestApp } from './support/app.ts'

let app: TestApp
let pub: Api
const DOMAIN = 'app.test'

beforeAll(async () => {
  app = await startTestApp({ SIWE_DOMAIN: DOMAIN, RATE_LIMIT_WINDOW_SECONDS: '60' })
  pub = apiClient(`${app.url}/api/v1`)
})
afterAll(async () => {
  await app?.close()
})

async function signIn(account = privateKeyToAccount(generatePrivateKey()), { domain = DOMAIN, nonce }: { domain?: string; nonce?: string } = {}) {
  const n = nonce ?? (await pub('GET', '/auth/nonce')).body.nonce
  const message = createSiweMessage({ address: account.address, chainId: 31337, domain, nonce: n, uri: `https://${domain}`, version: '1' })
  const signature = await account.signMessage({ message })
  const res = await pub('POST', '/auth/siwe', { message, signature })
  return { res, account, nonce: n, message, signature }
}

describe('Sign-In with Ethereum', () => {
  it('issues a nonce with the chain id', async () => {
    const res = await pub('GET', '/auth/nonce')
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ nonce: expect.stringMatching(/^[A-Za-z0-9]{8,}$/), chainId: 31337 })
  })

  it('signs in as the signing address with an http-only cookie; writes need the CSRF token', async () => {
    const { res, account } = await signIn()
    expect(res.status).toBe(200)
    expect(res.body.account.address).toBe(account.address.toLowerCase())
    const setCookie = res.headers.get('set-cookie') ?? ''
    expect(setCookie).toMatch(/sid=/)
    expect(setCookie.toLowerCase()).toContain('httponly')
    expect(setCookie.toLowerCase()).toContain('samesite=lax')
    const cookie = setCookie.split(';')[0]!
    const session = apiClient(`${app.url}/api/v1`)
    const me = await session('GET', '/me', undefined, { cookie })
    expect(me.status).toBe(200)
    expect(me.body.address).toBe(account.address.toLowerCase())
    const agent = { name: 's', model: 'gpt-4o-mini', skills: [] }
    const noCsrf = await session('POST', '/agents', agent, { cookie })
    expect(noCsrf.status).toBe(403)
    expect(noCsrf.body.code).toBe('csrf_token_invalid')
    const withCsrf = await session('POST', '/agents', agent, { cookie, 'x-csrf-token': res.body.csrfToken })
    expect(withCsrf.status).toBe(201)
    // Same address again: same account.
    const again = await signIn(account)
    expect(again.res.body.account.id).toBe(res.body.account.id)
    const out = await session('POST', '/auth/logout', undefined, { cookie })
    expect(out.status).toBe(200)
    expect((await session('GET', '/me', undefined, { cookie })).status).toBe(401)
  })

  it("GET /auth/session answers the cookie's session with its CSRF token; without a live session cookie it is 401", async () => {
    const { res, account } = await signIn()
    const cookie = (res.headers.get('set-cookie') ?? '').split(';')[0]!
    const session = apiClient(`${app.url}/api/v1`)
    const got = await session('GET', '/auth/session', undefined, { cookie })
    expect(got.status).toBe(200)
    expect(got.headers.get('cache-control')).toBe('no-store')
    expect(got.body).toMatchObject({ accountId: res.body.account.id, address: account.address.toLowerCase(), isOperator: false, csrfToken: res.body.csrfToken })
    const ttl = Date.parse(got.body.expiresAt) - Date.now()
    expect(ttl).toBeGreaterThan(6 * 86_400_000)
    expect(ttl).toBeLessThanOrEqual(7 * 86_400_000)
    // The token it answers is the one writes with the cookie need.
    const agent = await session('POST', '/agents', { name: 'from-session', model: 'gpt-4o-mini', skills: [] }, { cookie, 'x-csrf-token': got.body.csrfToken })
    expect(agent.status).toBe(201)
    // No cookie, a bearer key alone, a forged cookie, a query: refused.
    expect((await pub('GET', '/auth/session')).body.code).toBe('unauthorized')
    const keyed = await app.account({ name: 'keyed' })
    expect((await keyed.api('GET', '/auth/session')).status).toBe(401)
    expect((await session('GET', '/auth/session', undefined, { cookie: `sid=${'x'.repeat(43)}` })).status).toBe(401)
    expect((await session('GET', '/auth/session?x=1', undefined, { cookie })).status).toBe(422)
    // Signed out: the session is gone.
    expect((await session('POST', '/auth/logout', undefined, { cookie })).status).toBe(200)
    expect((await session('GET', '/auth/session', undefined, { cookie })).status).toBe(401)
  })

  it('a dashboard session may change an agent\'s guardrails; the audit trail names the signing address', async () => {
    const { res, account } = await signIn()
    const headers = { cookie: (res.headers.get('set-cookie') ?? '').split(';')[0]!, 'x-csrf-token': res.body.csrfToken }
    const session = apiClient(`${app.url}/api/v1`)
    const agent = await session('POST', '/agents', { name: 's', model: 'gpt-4o-mini', skills: [] }, headers)
    const patched = await session('PATCH', `/agents/${agent.body.id}`, { policy: { max_trade_usd: '5' } }, headers)
    expect(patched.status).toBe(200)
    expect(patched.body.policy.maxTradeUsd).toBe('5')
    const audit = await session('GET', `/agents/${agent.body.id}/audit`, undefined, headers)
    expect(audit.body.entries).toMatchObject([
      { action: 'policy.change', actor: { type: 'session', address: account.address.toLowerCase() }, before: { max_trade_usd: '1000' }, after: { max_trade_usd: '5' } },
    ])
    // Another account's agent trail is "not found".
    const other = await app.account({ name: 'other' })
    expect((await other.api('GET', `/agents/${agent.body.id}/audit`)).status).toBe(404)
  })

  it('refuses a reused nonce, another domain, a forged signature and a malformed message', async () => {
    const first = await signIn()
    expect(first.res.status).toBe(200)
    const replay = await pub('POST', '/auth/siwe', { message: first.message, signature: first.signature })
    expect(replay.status).toBe(401)
    const evil = await signIn(undefined, { domain: 'evil.example' })
    expect(evil.res.status).toBe(401)
    const victim = privateKeyToAccount(generatePrivateKey())
    const n = (await pub('GET', '/auth/nonce')).body.nonce
    const message = createSiweMessage({ address: victim.address, chainId: 31337, domain: DOMAIN, nonce: n, uri: `https://${DOMAIN}`, version: '1' })
    const forged = await privateKeyToAccount(generatePrivateKey()).signMessage({ message })
    expect((await pub('POST', '/auth/siwe', { message, signature: forged })).status).toBe(401)
    const junk = await pub('POST', '/auth/siwe', { message: 'hello', signature: '0x1234' })
    expect([401, 422]).toContain(junk.status)
    expect((await pub('POST', '/auth/siwe', { message: 5 })).status).toBe(422)
  })
})

describe('failed authentication is rate limited per IP', () => {
  it('answers 429 with Retry-After after too many bad keys', async () => {
    const statuses: number[] = []
    let last
    for (let i = 0; i < 70; i++) {
      last = await apiClient(`${app.url}/api/v1`, `cpk_${'A'.repeat(38)}`)('GET', '/me')
      statuses.push(last.status)
    }
    expect(statuses.slice(0, 10).every((s) => s === 401)).toBe(true)
    expect(statuses.at(-1)).toBe(429)
    expect(last!.body.code).toBe('rate_limited')
    expect(Number(last!.headers.get('retry-after'))).toBeGreaterThan(0)
  })
})

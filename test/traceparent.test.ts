import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type TestApp } from './support/app.ts'

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/

// Tracing off (no OTEL_* set): every answer still carries a W3C traceparent (docs/operations.md, Traces).
describe('traceparent on every answer, tracing off', () => {
  let app: TestApp
  beforeAll(async () => {
    app = await startTestApp()
  })
  afterAll(async () => {
    await app?.close()
  })

  it('a fresh trace id per request when none came in, not sampled', async () => {
    const a = await fetch(`${app.url}/api/v1/health`)
    const b = await fetch(`${app.url}/api/v1/health`)
    const [, ta, sa, fa] = a.headers.get('traceparent')!.match(TRACEPARENT)!
    const [, tb] = b.headers.get('traceparent')!.match(TRACEPARENT)!
    expect(ta).not.toBe(tb)
    expect(ta).not.toBe('0'.repeat(32))
    expect(sa).not.toBe('0'.repeat(16))
    expect(fa).toBe('00')
  })

  it("continues the caller's trace: its trace id and flags, a span id of its own", async () => {
    const incoming = `00-${'4bf92f3577b34da6a3ce929d0e0e4736'}-${'00f067aa0ba902b7'}-01`
    const res = await fetch(`${app.url}/api/v1/health`, { headers: { traceparent: incoming } })
    const [, t, s, f] = res.headers.get('traceparent')!.match(TRACEPARENT)!
    expect(t).toBe('4bf92f3577b34da6a3ce929d0e0e4736')
    expect(s).not.toBe('00f067aa0ba902b7')
    expect(f).toBe('01')
  })

  it('errors and unknown paths carry it too; a malformed incoming one is ignored', async () => {
    const unauth = await fetch(`${app.url}/api/v1/agents`)
    expect(unauth.status).toBe(401)
    expect(unauth.headers.get('traceparent')).toMatch(TRACEPARENT)
    const missing = await fetch(`${app.url}/api/v1/no-such-thing`, { headers: { traceparent: 'zz-not-a-traceparent' } })
    expect(missing.status).toBe(404)
    expect(missing.headers.get('traceparent')).toMatch(TRACEPARENT)
    expect(missing.headers.get('traceparent')).not.toContain('zz')
  })
})

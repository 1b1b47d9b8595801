import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Webhook } from 'standardwebhooks'
import { startTestApp, type Api, type TestApp } from './support/app.ts'
import { HOOK_RATE_LIMIT } from '../src/http/routes/hooks.routes.ts'

/**
 * Signal hook rotation (a new URL and secret; the previous pair works for the grace period, or
 * not at all with graceSeconds 0) and the per-automation rate limit of POST
 * /hooks/automations/:id/:token (429 with Retry-After beyond it, nothing fired). The action is a
 * read-only quote, so the messages move no funds. Real server, real anvil.
 */
let app: TestApp
let api: Api
let agentId: string

const quoteAction = { type: 'tool_call', tool: 'swap_quote', args: { tokenIn: 'ETH', tokenOut: 'USDC', amountIn: '0.01' } }
const inboxRows = async (automationId: string) =>
  (await app.services.pool.query(`select count(*)::int as n from actor_inbox where actor_id = $1 and event->>'type' = 'automation.trigger'`, [automationId])).rows[0].n as number

async function hooked(trigger: Record<string, unknown>) {
  const res = await api('POST', '/automations', { agent_id: agentId, name: 'signal', trigger, action: quoteAction })
  expect(res.status, JSON.stringify(res.body)).toBe(201)
  return res.body as { id: string; hook: { url: string; secret: string } }
}

/** POSTs `body` to the hook URL, signed with `secret` (unless null). */
async function send(url: string, secret: string | null, msgId: string, body: Record<string, unknown> = {}) {
  const text = JSON.stringify({ id: msgId, ...body })
  const headers: Record<string, string> = { 'content-type': 'application/json' }
  if (secret) {
    const at = new Date()
    Object.assign(headers, { 'webhook-id': msgId, 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': new Webhook(secret).sign(msgId, at, text) })
  }
  const res = await fetch(url, { method: 'POST', headers, body: text })
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body: (await res.json()) as Record<string, any> }
}

beforeAll(async () => {
  app = await startTestApp({}, { withChain: true })
  ;({ api } = await app.account())
  agentId = (await api('POST', '/agents', { name: 'signals', skills: ['trading'] })).body.id
  expect((await api('POST', `/agents/${agentId}/start`)).status).toBe(200)
})
afterAll(async () => {
  await app?.close()
})

describe('signal hook rotation', () => {
  it('a rotation answers a new URL and secret; the old pair works through the grace period, each URL with its own secret', async () => {
    const a = await hooked({ type: 'webhook' })
    const rotated = await api('POST', `/automations/${a.id}/hook/rotate`, {})
    expect(rotated.status, JSON.stringify(rotated.body)).toBe(200)
    expect(rotated.body.url).toMatch(new RegExp(`/api/v1/hooks/automations/${a.id}/[A-Za-z0-9_-]{16,64}$`))
    expect(rotated.body.url).not.toBe(a.hook.url)
    expect(rotated.body.secret).toMatch(/^whsec_/)
    // The default grace: an hour from the rotation, by the database's clock (the one that checks it).
    const { rows } = await app.services.pool.query(`select extract(epoch from ($1::timestamptz - now()))::float as s`, [rotated.body.previousValidUntil])
    expect(rows[0].s).toBeGreaterThan(3500)
    expect(rows[0].s).toBeLessThanOrEqual(3600)

    expect((await send(a.hook.url, a.hook.secret, 'old-1')).status).toBe(202)
    expect((await send(rotated.body.url, rotated.body.secret, 'new-1')).status).toBe(202)
    expect((await send(rotated.body.url, a.hook.secret, 'mixed-1')).status).toBe(401)
    expect((await send(a.hook.url, rotated.body.secret, 'mixed-2')).status).toBe(401)
    expect(await inboxRows(a.id)).toBe(2)
  })

  it('graceSeconds 0 ends the previous URL at once; a bad body is 422 naming the field; another account or no hook is 404', async () => {
    const a = await hooked({ type: 'webhook', auth: 'token' })
    const bad = await api('POST', `/automations/${a.id}/hook/rotate`, { graceSeconds: 90000 })
    expect(bad.status).toBe(422)
    expect(Object.keys(bad.body.field_errors)).toEqual(['graceSeconds'])
    const rotated = await api('POST', `/automations/${a.id}/hook/rotate`, { graceSeconds: 0 })
    expect(rotated.status).toBe(200)
    expect(rotated.body.previousValidUntil).toBeNull()
    const old = await send(a.hook.url, null, 'after-rotation')
    expect(old.status).toBe(404)
    expect((await send(rotated.body.url, null, 'after-rotation')).status).toBe(202)
    expect(await inboxRows(a.id)).toBe(1)

    const other = (await app.account({ name: 'other' })).api
    expect((await other('POST', `/automations/${a.id}/hook/rotate`, {})).status).toBe(404)
    const plain = await api('POST', '/automations', { agent_id: agentId, name: 'timed', trigger: { type: 'interval', everySeconds: 3600 }, action: quoteAction })
    expect(plain.status, JSON.stringify(plain.body)).toBe(201)
    expect((await api('POST', `/automations/${plain.body.id}/hook/rotate`, {})).status).toBe(404)
  })
})

describe('the per-automation rate limit of signal webhooks', () => {
  it(`takes ${HOOK_RATE_LIMIT.limit} messages a minute per automation, then answers 429 with Retry-After and fires nothing; another automation is not limited`, async () => {
    const a = await hooked({ type: 'webhook', auth: 'token' })
    const b = await hooked({ type: 'webhook', auth: 'token' })
    for (let i = 0; i < HOOK_RATE_LIMIT.limit; i++) {
      const res = await send(a.hook.url, null, `burst-${i}`)
      expect(res.status, JSON.stringify(res.body)).toBe(202)
    }
    const over = await send(a.hook.url, null, 'burst-over')
    expect(over.status).toBe(429)
    expect(over.body.code).toBe('rate_limited')
    expect(Number(over.retryAfter)).toBeGreaterThan(0)
    expect(Number(over.retryAfter)).toBeLessThanOrEqual(HOOK_RATE_LIMIT.windowSeconds)
    expect((await send(a.hook.url, null, 'burst-over-2')).status).toBe(429)
    expect(await inboxRows(a.id)).toBe(HOOK_RATE_LIMIT.limit)
    const { rowCount } = await app.services.pool.query(`select 1 from actor_inbox where actor_id = $1 and event #>> '{source,messageId}' like 'burst-over%'`, [a.id])
    expect(rowCount).toBe(0)
    expect((await send(b.hook.url, null, 'other-1')).status).toBe(202)
  }, 60_000)
})

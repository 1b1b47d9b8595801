import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Webhook } from 'standardwebhooks'
import { startTestApp, type Api, type TestApp } from './support/app.ts'

/**
 * Signal webhooks in: an automation with a `webhook` trigger fires on a POST to its secret URL,
 * once per sender's message id, with the values its body carries (checked against the trigger's
 * `values`); a bad signature or a bad body fires nothing. Real server, real anvil.
 */
let app: TestApp
let api: Api
let agentId: string
let wallet: `0x${string}`

const nonce = () => app.services.chain!.publicClient.getTransactionCount({ address: wallet })
const swapAction = { type: 'tool_call', tool: 'swap_execute', args: { tokenIn: 'ETH', tokenOut: 'USDC', amountIn: '0.01' } }
const inboxRows = async (automationId: string) =>
  (await app.services.pool.query(`select count(*)::int as n from actor_inbox where actor_id = $1 and event->>'type' = 'automation.trigger'`, [automationId])).rows[0].n as number

async function hooked(trigger: Record<string, unknown>) {
  const res = await api('POST', '/automations', { agent_id: agentId, name: 'signal', trigger, action: swapAction })
  expect(res.status, JSON.stringify(res.body)).toBe(201)
  return res.body as { id: string; hook: { url: string; secret: string } }
}

/** POSTs `body` to the hook URL, signed with `secret` as a Standard Webhooks sender does (unless `secret` is null). */
async function send(url: string, secret: string | null, msgId: string, body: unknown, tamper = false) {
  const text = JSON.stringify(body)
  const headers: Record<string, string> = { 'content-type': 'application/json' }
  if (secret) {
    const at = new Date()
    Object.assign(headers, { 'webhook-id': msgId, 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': new Webhook(secret).sign(msgId, at, text) })
    if (tamper) headers['webhook-signature'] = new Webhook(`whsec_${Buffer.alloc(32, 7).toString('base64')}`).sign(msgId, at, text)
  }
  const res = await fetch(url, { method: 'POST', headers, body: text })
  return { status: res.status, body: (await res.json()) as Record<string, any> }
}

beforeAll(async () => {
  app = await startTestApp({}, { withChain: true })
  ;({ api } = await app.account())
  const agent = (await api('POST', '/agents', { name: 'signals', skills: ['trading'] })).body
  ;[agentId, wallet] = [agent.id, agent.walletAddress]
  expect((await api('POST', '/dev/faucet', { agentId, eth: '2' })).status).toBe(200)
  expect((await api('POST', `/agents/${agentId}/start`)).status).toBe(200)
})
afterAll(async () => {
  await app?.close()
})

describe('an automation fired by a signal webhook', () => {
  it('creation answers the hook URL and secret once; a message sent twice fires one swap, with the amount it carries', async () => {
    const a = await hooked({ type: 'webhook', values: { amount: { type: 'amount', arg: 'amountIn', max: '0.1' } } })
    expect(a.hook.url).toMatch(new RegExp(`/api/v1/hooks/automations/${a.id}/[A-Za-z0-9_-]{16,64}$`))
    expect(a.hook.secret).toMatch(/^whsec_/)
    expect((await api('GET', `/automations/${a.id}`)).body).not.toHaveProperty('hook')

    const n0 = await nonce()
    const first = await send(a.hook.url, a.hook.secret, 'msg_signal_1', { amount: '0.02' })
    expect(first).toMatchObject({ status: 202, body: { automationId: a.id, messageId: 'msg_signal_1', accepted: true, duplicate: false } })
    const again = await send(a.hook.url, a.hook.secret, 'msg_signal_1', { amount: '0.02' })
    expect(again).toMatchObject({ status: 202, body: { duplicate: true } })

    await expect.poll(async () => (await api('GET', `/automations/${a.id}`)).body.firings[0]?.outcome, { timeout: 20_000 }).toBe('ok')
    const auto = (await api('GET', `/automations/${a.id}`)).body
    expect(auto.runCount).toBe(1)
    expect(auto.firings).toHaveLength(1)
    expect((await api('GET', `/swap/${auto.firings[0].childId}`)).body).toMatchObject({ status: 'confirmed', amountIn: '0.02' })
    expect(await nonce()).toBe(n0 + 1)
    expect(await inboxRows(a.id)).toBe(1)
  })

  it('a bad signature is 401, a body outside the schema is 422 naming the field, a wrong token 404: none fires', async () => {
    const a = await hooked({ type: 'webhook', values: { amount: { type: 'amount', arg: 'amountIn', max: '0.1' } } })
    const forged = await send(a.hook.url, a.hook.secret, 'msg_forged', { amount: '0.02' }, true)
    expect(forged.status).toBe(401)
    expect(forged.body.code).toBe('invalid_signature')
    expect((await send(a.hook.url, null, 'msg_unsigned', { id: 'msg_unsigned' })).status).toBe(401)
    const tooMuch = await send(a.hook.url, a.hook.secret, 'msg_big', { amount: '5' })
    expect(tooMuch.status).toBe(422)
    expect(tooMuch.body).toMatchObject({ code: 'validation_failed', field_errors: { amount: 'At most 0.1.' } })
    const wrong = await send(a.hook.url.replace(/\/[^/]+$/, '/AAAAAAAAAAAAAAAAAAAAAAAA'), a.hook.secret, 'msg_wrong', { amount: '0.02' })
    expect(wrong.status).toBe(404)
    expect(await inboxRows(a.id)).toBe(0)
    expect((await api('GET', `/automations/${a.id}`)).body.runCount).toBe(0)
  })

  it("a value the action would refuse when firing (more decimals than the token has, a JSON number) is 422 naming the field at the hook, records nothing, and can never put the automation into error", async () => {
    const a = await hooked({ type: 'webhook', values: { amount: { type: 'amount', arg: 'amountIn' } } })
    const seen: Array<[number, string | undefined]> = []
    for (let i = 0; i < 4; i++) {
      // 22 decimals: ETH has 18.
      const tiny = await send(a.hook.url, a.hook.secret, `msg_tiny_${i}`, { amount: '0.0000000000000000000001' })
      seen.push([tiny.status, tiny.body.field_errors?.amount])
    }
    expect(seen).toEqual(Array(4).fill([422, expect.stringContaining('ETH has 18 decimals')]))
    const number = await send(a.hook.url, a.hook.secret, 'msg_number', { amount: 0.02 })
    expect({ status: number.status, amount: number.body.field_errors?.amount }).toEqual({ status: 422, amount: expect.stringContaining('decimal string') })
    // The decimals are the action's token's: USDC has 6.
    const usdcRes = await api('POST', '/automations', {
      agent_id: agentId, name: 'usdc signal', trigger: { type: 'webhook', values: { size: { type: 'amount', arg: 'amountIn' } } },
      action: { type: 'tool_call', tool: 'swap_execute', args: { tokenIn: 'USDC', tokenOut: 'ETH', amountIn: '1' } },
    })
    expect(usdcRes.status, JSON.stringify(usdcRes.body)).toBe(201)
    const usdc = await send(usdcRes.body.hook.url, usdcRes.body.hook.secret, 'msg_usdc', { size: '0.1234567' })
    expect({ status: usdc.status, size: usdc.body.field_errors?.size }).toEqual({ status: 422, size: expect.stringContaining('USDC has 6 decimals') })
    expect(await inboxRows(usdcRes.body.id)).toBe(0)
    expect(await inboxRows(a.id)).toBe(0)
    const after = (await api('GET', `/automations/${a.id}`)).body
    expect({ status: after.status, runCount: after.runCount, firings: after.firings }).toEqual({ status: 'armed', runCount: 0, firings: [] })
    // 18 decimals are taken, and the firing swaps that amount.
    const exact = await send(a.hook.url, a.hook.secret, 'msg_exact', { amount: '0.001000000000000001' })
    expect(exact.status).toBe(202)
    await expect.poll(async () => (await api('GET', `/automations/${a.id}`)).body.firings[0]?.outcome, { timeout: 20_000 }).toBe('ok')
  })

  it("auth: token takes an unsigned message (a TradingView alert) by its body's id", async () => {
    const a = await hooked({ type: 'webhook', auth: 'token' })
    expect((await send(a.hook.url, null, '', { note: 'no id' })).status).toBe(422)
    const tv = await send(a.hook.url, null, '', { id: 'tv-alert-1', ticker: 'ETHUSD' })
    expect(tv).toMatchObject({ status: 202, body: { messageId: 'tv-alert-1', duplicate: false } })
    await expect.poll(async () => (await api('GET', `/automations/${a.id}`)).body.firings[0]?.outcome, { timeout: 20_000 }).toBe('ok')
    // A signature sent anyway must verify.
    expect((await send(a.hook.url, a.hook.secret, 'msg_forged_2', {}, true)).status).toBe(401)
  })
})

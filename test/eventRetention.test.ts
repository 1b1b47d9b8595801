import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type Api, type TestApp } from './support/app.ts'
import { startReceiver } from './support/webhookReceiver.ts'
import { loadConfig } from '../src/config.ts'

/**
 * Retention: each node's periodic sweep deletes account events older than EVENT_RETENTION_HOURS
 * with their webhook deliveries, and keeps recent ones, and old ones whose delivery is still being
 * tried. The sweep runs every 100 ms here; rows are made old by moving their creation back. Real server.
 */
let app: TestApp
let api: Api
let receiver: Awaited<ReturnType<typeof startReceiver>>

const q = async (sql: string, params: unknown[] = []) => (await app.services.pool.query(sql, params)).rows

beforeAll(async () => {
  app = await startTestApp({ WEBHOOK_POLL_MS: '50', EVENT_RETENTION_HOURS: '24', EVENT_RETENTION_SWEEP_SECONDS: '0.1' })
  ;({ api } = await app.account())
  receiver = await startReceiver()
})
afterAll(async () => {
  await receiver?.close()
  await app?.close()
})

describe('account event retention', () => {
  it('deletes events (and their deliveries) past the retention, keeps recent ones and those still being delivered', async () => {
    const hook = await api('POST', '/webhooks', { url: receiver.url(), events: ['agent.paused'] })
    expect(hook.status).toBe(201)
    receiver.trust(hook.body.secret)
    for (let i = 0; i < 3; i++) expect((await api('POST', `/webhooks/${hook.body.id}/test`)).status).toBeLessThan(300)
    await expect.poll(() => receiver.ofType('webhook.test').length, { timeout: 10_000 }).toBe(3)
    // The sender records each delivery after its answer: the rows are changed below only once all
    // three are recorded, or a late record would undo the change (the third taken for delivered).
    await expect.poll(async () => (await q(`select 1 from webhook_delivery d join account_event e on e.seq = d.event_seq where e.type = 'webhook.test' and d.status = 'delivered'`)).length, { timeout: 10_000 }).toBe(3)
    const events = await q(`select e.seq, e.id, d.id as delivery from account_event e join webhook_delivery d on d.event_seq = e.seq where e.type = 'webhook.test' order by e.seq`)
    expect(events).toHaveLength(3)
    const [old, recent, retrying] = events as Array<{ seq: string; id: string; delivery: string }>
    // The third's delivery is still being tried; then the first and third are 25 hours old (in
    // that order: the sweep runs every 100 ms, and must never see the third old and delivered).
    await q(`update webhook_delivery set status = 'failed', next_attempt_at = now() + interval '1 hour' where id = $1`, [retrying!.delivery])
    await q(`update account_event set created_at = now() - interval '25 hours' where seq = any($1::bigint[])`, [[old!.seq, retrying!.seq]])

    await expect.poll(async () => (await q('select 1 from account_event where seq = $1', [old!.seq])).length, { timeout: 10_000 }).toBe(0)
    expect(await q('select 1 from webhook_delivery where id = $1', [old!.delivery])).toHaveLength(0)
    expect(await q('select 1 from account_event where seq = any($1::bigint[])', [[recent!.seq, retrying!.seq]])).toHaveLength(2)
    expect(await q('select 1 from webhook_delivery where id = any($1::text[])', [[recent!.delivery, retrying!.delivery]])).toHaveLength(2)

    // Once its delivery ends (dead), the old event goes too; the recent one stays.
    await q(`update webhook_delivery set status = 'dead', next_attempt_at = null where id = $1`, [retrying!.delivery])
    await expect.poll(async () => (await q('select 1 from account_event where seq = $1', [retrying!.seq])).length, { timeout: 10_000 }).toBe(0)
    expect(await q('select 1 from account_event where seq = $1', [recent!.seq])).toHaveLength(1)
    const page = await api('GET', `/webhooks/${hook.body.id}/deliveries`)
    expect(page.body.deliveries.map((d: { id: string }) => d.id)).toEqual([recent!.delivery])
  })

  it('refuses a retention under 24 hours (Last-Event-ID resumes for at least 24 h)', () => {
    const env = { DATABASE_URL: 'postgres://127.0.0.1/x', PORT: '0' }
    expect(() => loadConfig({ ...env, EVENT_RETENTION_HOURS: '23' })).toThrow(/EVENT_RETENTION_HOURS/)
    expect(loadConfig(env).webhooks).toMatchObject({ retentionHours: 72, retentionSweepMs: 600_000 })
  })
})

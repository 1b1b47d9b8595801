import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type Api, type TestApp } from './support/app.ts'
import { watchAllStatements } from './support/statementCounter.ts'
import { startReceiver } from './support/webhookReceiver.ts'
import { waitFor } from './support/waitFor.ts'

/**
 * The pollers never spin. A poller that polls again at once without having taken any work (an
 * idle dispatcher, a scan that finds the same rows again while they are being worked) costs a
 * core of Postgres and grows with nothing: both have happened here (the webhook dispatcher
 * polling without pause while no delivery waited; an inbox scan coming back full and polling
 * again at once while its drains ran, docs/benchmarks.md). Counted by statement, every poller of
 * the service included: idle, and while a backlog written outside the runtime (many inbox rows
 * in one statement) is worked off, and with more actors that cannot be loaded than a scan takes
 * (their rows stay: before, the scan found the same thousand each poll and never reached the
 * others). The runtime polls every 250 ms here, as in production.
 */
const POLL_MS = 250
const counter = watchAllStatements()
let app: TestApp
let api: Api
let receiver: Awaited<ReturnType<typeof startReceiver>>

/** How many of `statements` each label sent, most first: what a failure names. */
const tally = (statements: string[]) =>
  Object.entries(statements.reduce<Record<string, number>>((m, s) => ({ ...m, [s]: (m[s] ?? 0) + 1 }), {})).sort((a, b) => b[1] - a[1])

beforeAll(async () => {
  receiver = await startReceiver()
  app = await startTestApp({ AUTOMATION_MIN_INTERVAL_SECONDS: '1', RATE_LIMIT_PER_KEY: '100000', RATE_LIMIT_PER_IP: '100000' }, { runtimePollMs: POLL_MS })
  ;({ api } = await app.account())
}, 60_000)
afterAll(async () => {
  await app?.close()
  await receiver?.close()
  counter.restore()
})

describe('the pollers', () => {
  it('idle, with agents, automations due in an hour and a webhook endpoint: a few statements a second, not a spin', async () => {
    const agent = (await api('POST', '/agents', { name: 'idle', skills: ['trading'] })).body.id as string
    const hook = await api('POST', '/webhooks', { url: receiver.url(), events: ['*'] })
    expect(hook.status, JSON.stringify(hook.body)).toBe(201)
    receiver.trust(hook.body.secret)
    const later = new Date(Date.now() + 3_600_000).toISOString()
    for (let i = 0; i < 5; i++) {
      const r = await api('POST', '/automations', { agent_id: agent, name: `later-${i}`, trigger: { type: 'interval', everySeconds: 3600, startAt: later }, action: { type: 'tool_call', tool: 'get_agent', args: {} } })
      expect(r.status, JSON.stringify(r.body)).toBe(201)
    }
    // Whatever the creations set going ends first.
    await new Promise((r) => setTimeout(r, 1_000))

    counter.start()
    const t0 = performance.now()
    await new Promise((r) => setTimeout(r, 3_000))
    const sent = counter.stop()
    const perSecond = sent.length / ((performance.now() - t0) / 1000)
    // Each poller's tick is a handful of statements: the runtime's (timers, the next timer, the
    // inbox scan, effects) four times a second, the heartbeat, the webhook dispatcher's and the
    // trigger feed's polls. A spin sends hundreds or thousands a second.
    expect(perSecond, JSON.stringify(tally(sent))).toBeLessThan(60)
  })

  it('a backlog of inbox rows written in one statement is worked off without polling again at once on what it already found', async () => {
    const agent = (await api('POST', '/agents', { name: 'backlog', skills: ['trading'] })).body.id as string
    const later = new Date(Date.now() + 3_600_000).toISOString()
    const N = 150
    for (let i = 0; i < N; i += 10) {
      await Promise.all(Array.from({ length: 10 }, async (_, j) => {
        const r = await api('POST', '/automations', { agent_id: agent, name: `later-${i + j}`, trigger: { type: 'interval', everySeconds: 3600, startAt: later }, action: { type: 'tool_call', tool: 'get_agent', args: {} } })
        expect(r.status, JSON.stringify(r.body)).toBe(201)
      }))
    }
    const armed = async () =>
      (await app.services.pool.query<{ n: number }>(`select count(*)::int as n from actor where kind = 'automation' and status = 'armed' and snapshot->'context'->>'agentId' = $1`, [agent])).rows[0]!.n
    expect(await armed()).toBe(N)

    // Deleting the agent tells its N automations in one statement (N inbox rows); each cancels.
    counter.start()
    const t0 = performance.now()
    expect((await api('DELETE', `/agents/${agent}`)).status).toBe(200)
    await waitFor(async () => (await armed()) === 0, 30_000)
    const sent = counter.stop()
    const polls = Math.ceil((performance.now() - t0) / POLL_MS)
    const scans = sent.filter((s) => s.startsWith('select distinct actor_id from actor_inbox')).length
    const claims = sent.filter((s) => s === 'actor.claim_timers').length
    // One scan and one timer claim a poll, polls every POLL_MS, plus the few a full claim of work
    // asks at once (each of those took rows off the backlog, so they are bounded by N / batch).
    expect(scans, JSON.stringify(tally(sent).slice(0, 12))).toBeLessThanOrEqual(polls + 5)
    expect(claims, JSON.stringify(tally(sent).slice(0, 12))).toBeLessThanOrEqual(polls + 5)
  })

  it('inboxes of actors that cannot be loaded (stuck, awaiting an operator) hide no other inbox and keep the scan to one a poll', async () => {
    const agent = (await api('POST', '/agents', { name: 'stuck', skills: ['trading'] })).body.id as string
    const later = new Date(Date.now() + 3_600_000).toISOString()
    // More than one scan takes at most (its batch follows the backlog up to 1,000): every scan comes back full.
    const N = 1_050
    const ids: string[] = []
    for (let i = 0; i < N; i += 25) {
      ids.push(...await Promise.all(Array.from({ length: Math.min(25, N - i) }, async (_, j) => {
        const r = await api('POST', '/automations', { agent_id: agent, name: `stuck-${i + j}`, trigger: { type: 'interval', everySeconds: 3600, startAt: later }, action: { type: 'tool_call', tool: 'get_agent', args: {} } })
        expect(r.status, JSON.stringify(r.body)).toBe(201)
        return r.body.id as string
      })))
    }
    // Their snapshots made unreadable (and dropped from the cache): a drain marks each stuck and leaves its inbox as it is.
    await app.services.pool.query(`update actor set snapshot = snapshot - 'value' where id = any($1::text[])`, [ids])
    for (const id of ids) app.services.runtime.forget(id)
    expect((await api('DELETE', `/agents/${agent}`)).status).toBe(200)
    const pending = async () =>
      (await app.services.pool.query<{ n: number }>(`select count(distinct actor_id)::int as n from actor_inbox where processed_at is null and actor_id = any($1::text[])`, [ids])).rows[0]!.n
    await waitFor(async () => (await pending()) === N, 10_000)
    // Each marked stuck by its first drain; from then on a drain leaves it at once.
    const stuck = async () => (await app.services.pool.query<{ n: number }>(`select count(*)::int as n from actor where id = any($1::text[]) and stuck_at is not null`, [ids])).rows[0]!.n
    await waitFor(async () => (await stuck()) === N, 20_000)
    await new Promise((r) => setTimeout(r, POLL_MS))

    counter.start()
    const t0 = performance.now()
    await new Promise((r) => setTimeout(r, 2_000))
    const sent = counter.stop()
    const polls = Math.ceil((performance.now() - t0) / POLL_MS)
    const scans = sent.filter((s) => s.startsWith('select distinct actor_id from actor_inbox')).length
    expect(scans, JSON.stringify(tally(sent).slice(0, 12))).toBeLessThanOrEqual(polls + 2)
    expect(await pending()).toBe(N)
  })
})

import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type TestApp } from './support/app.ts'
import { waitFor } from './support/waitFor.ts'
import { deferEffect } from '../src/actors/runtime/effectStore.ts'

let app: TestApp
beforeAll(async () => {
  app = await startTestApp()
})
afterAll(async () => {
  await app?.close()
})

describe('stuck actors for operators', () => {
  it('an inbox event that fails validation is a dead letter: listed by GET /ops/actors?status=stuck, shown on the actor', async () => {
    const op = await app.account({ operator: true })
    const alice = await app.account()
    const id = randomUUID()
    const runtime = app.services.runtime
    await runtime.create('agent', { id, accountId: alice.accountId, input: { agentId: id, accountId: alice.accountId } })
    expect((await op.api('GET', '/ops/actors?status=stuck')).body.actors.map((a: { id: string }) => a.id)).not.toContain(id)

    await runtime.enqueue(id, alice.accountId, { type: 'agent.explode' }, `bad:${id}`)
    await waitFor(async () => (await app.services.pool.query('select stuck_at from actor where id = $1', [id])).rows[0].stuck_at !== null)

    const stuck = await op.api('GET', '/ops/actors?status=stuck&limit=100')
    expect(stuck.status).toBe(200)
    const listed = stuck.body.actors.find((a: { id: string }) => a.id === id)
    expect(listed).toMatchObject({ id, kind: 'agent', status: 'stopped', stuckReason: expect.stringContaining('dead letter') })
    const one = await op.api('GET', `/ops/actors/${id}`)
    expect(one.body.deadLetters).toEqual([
      // No trace: the event was sent from outside any request or traced work.
      { seq: expect.any(Number), event: { type: 'agent.explode' }, eventType: 'agent.explode', error: expect.stringContaining('validation'), deadAt: expect.any(String), resolvedAt: null, resolution: null, trace: null },
    ])
    // The machine never saw it.
    expect(one.body.journal.map((j: { event: { type: string } }) => j.event.type)).toEqual(['xstate.init'])
    expect((await alice.api('GET', '/ops/actors?status=stuck')).status).toBe(403)
  })
})

/** An agent actor of `accountId` with one dead letter carrying `event` (as a build that refused it left it), marked stuck. */
async function agentWithDeadLetter(accountId: string, event: { type: string }) {
  const id = randomUUID()
  await app.services.runtime.create('agent', { id, accountId, input: { agentId: id, accountId } })
  const { rows } = await app.services.pool.query(
    `insert into actor_inbox (actor_id, account_id, event, processed_at, dead_at, error) values ($1, $2, $3::jsonb, now(), now(), 'validation failed (older build)') returning seq`,
    [id, accountId, JSON.stringify(event)],
  )
  const seq = Number(rows[0].seq)
  await app.services.pool.query(`update actor set stuck_reason = 'dead letter ' || $2 || ': validation failed', stuck_at = now() where id = $1`, [id, seq])
  return { id, seq }
}
const auditOf = async (subjectId: string) =>
  (await app.services.pool.query('select action, actor, before, after from audit_log where subject_id = $1 order by id', [subjectId])).rows

describe('dead letters and stuck actors: operator actions', () => {
  it('retry enqueues the event again: the machine applies it, the mark clears, and the audit trail names the operator and the reason', async () => {
    const op = await app.account({ operator: true })
    const alice = await app.account()
    const { id, seq } = await agentWithDeadLetter(alice.accountId, { type: 'agent.start' })
    const listed = await op.api('GET', '/ops/dead-letters')
    expect(listed.status).toBe(200)
    expect(listed.body.deadLetters).toContainEqual(expect.objectContaining({ seq, actorId: id, kind: 'agent', event: { type: 'agent.start' } }))

    expect((await op.api('POST', `/ops/dead-letters/${seq}/retry`, {})).body.code).toBe('validation_failed')
    const res = await op.api('POST', `/ops/dead-letters/${seq}/retry`, { reason: 'the parser accepts it since 1.4' })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ seq, actorId: id, resolution: 'retried' })
    // Running, and its start's schedule check answered (this agent has no row: nothing to schedule).
    await waitFor(async () => (await op.api('GET', `/ops/actors/${id}`)).body.journal.length === 3)
    const actor = (await op.api('GET', `/ops/actors/${id}`)).body
    expect(actor).toMatchObject({ status: 'running', stuckReason: null })
    expect(actor.deadLetters).toEqual([expect.objectContaining({ seq, resolution: 'retried', resolvedAt: expect.any(String) })])
    expect(actor.journal.map((j: { event: { type: string } }) => j.event.type)).toEqual(['agent.run.skipped', 'agent.start', 'xstate.init'])
    expect(await auditOf(id)).toEqual([
      {
        action: 'ops.deadletter.retry',
        actor: { type: 'operator', accountId: op.accountId, via: 'key', keyId: expect.any(String), address: null },
        before: { seq, event: { type: 'agent.start' }, error: 'validation failed (older build)' },
        after: { seq, resolution: 'retried', reason: 'the parser accepts it since 1.4' },
      },
    ])
    // Resolved once: a second retry is 404, and the listing no longer shows it.
    expect((await op.api('POST', `/ops/dead-letters/${seq}/retry`, { reason: 'again' })).status).toBe(404)
    expect((await op.api('GET', '/ops/dead-letters')).body.deadLetters.map((d: { seq: number }) => d.seq)).not.toContain(seq)
  })

  it('discard drops the event for good and clears the mark; unstick clears a mark with no dead letter; both audited', async () => {
    const op = await app.account({ operator: true })
    const alice = await app.account()
    const { id, seq } = await agentWithDeadLetter(alice.accountId, { type: 'agent.explode' })
    const res = await op.api('POST', `/ops/dead-letters/${seq}/discard`, { reason: 'a client bug, nothing to replay' })
    expect(res.body).toMatchObject({ seq, resolution: 'discarded' })
    const actor = (await op.api('GET', `/ops/actors/${id}`)).body
    expect(actor).toMatchObject({ status: 'stopped', stuckReason: null })
    expect(actor.journal).toHaveLength(1)
    expect((await auditOf(id)).map((a) => [a.action, a.after.reason])).toEqual([['ops.deadletter.discard', 'a client bug, nothing to replay']])

    await app.services.pool.query(`update actor set stuck_reason = 'unreadable snapshot', stuck_at = now() where id = $1`, [id])
    const unstuck = await op.api('POST', `/ops/actors/${id}/unstick`, { reason: 'snapshot migrated by hand' })
    expect(unstuck.body).toMatchObject({ actorId: id, stuck: false, stuckReason: 'unreadable snapshot' })
    expect((await op.api('POST', `/ops/actors/${id}/unstick`, { reason: 'twice' })).status).toBe(409)
    expect((await auditOf(id)).at(-1)).toMatchObject({ action: 'ops.actor.unstick', before: { stuckReason: 'unreadable snapshot' }, after: { reason: 'snapshot migrated by hand' } })
  })

  it('every action is refused to a non-operator, and nothing changes or is audited', async () => {
    const alice = await app.account()
    const { id, seq } = await agentWithDeadLetter(alice.accountId, { type: 'agent.start' })
    for (const path of [`/ops/dead-letters/${seq}/retry`, `/ops/dead-letters/${seq}/discard`, `/ops/actors/${id}/unstick`, `/ops/agents/${id}/pause`, `/ops/runs/${id}/cancel`]) {
      const res = await alice.api('POST', path, { reason: 'let me in' })
      expect(res.status, path).toBe(403)
      expect(res.body.code).toBe('forbidden')
    }
    expect((await alice.api('GET', '/ops/dead-letters')).status).toBe(403)
    expect(await auditOf(id)).toEqual([])
    const { rows } = await app.services.pool.query('select resolved_at from actor_inbox where seq = $1', [seq])
    expect(rows[0].resolved_at).toBeNull()
  })
})

describe('dead-letter retries that would move funds', () => {
  it("a launch's launch.begin or launch.simulated is refused (409 retry_moves_funds): nothing resolved or audited; discard still works", async () => {
    const op = await app.account({ operator: true })
    const alice = await app.account()
    for (const event of [{ type: 'launch.begin' }, { type: 'launch.simulated', effectId: 'e1', gas: '100000' }]) {
      const id = randomUUID()
      await app.services.runtime.create('launch', { id, accountId: alice.accountId, input: { launchId: id, accountId: alice.accountId, agentId: randomUUID() } })
      const { rows } = await app.services.pool.query(
        `insert into actor_inbox (actor_id, account_id, event, processed_at, dead_at, error) values ($1, $2, $3::jsonb, now(), now(), 'validation failed (older build)') returning seq`,
        [id, alice.accountId, JSON.stringify(event)],
      )
      const seq = Number(rows[0].seq)
      expect((await op.api('GET', '/ops/dead-letters?limit=100')).body.deadLetters).toContainEqual(expect.objectContaining({ seq, kind: 'launch', eventType: event.type }))
      const res = await op.api('POST', `/ops/dead-letters/${seq}/retry`, { reason: 'try the launch again' })
      expect(res.status).toBe(409)
      expect(res.body.code).toBe('retry_moves_funds')
      expect(res.body.error).toContain(event.type)
      expect((await app.services.pool.query('select resolved_at from actor_inbox where seq = $1', [seq])).rows[0].resolved_at).toBeNull()
      expect(await auditOf(id)).toEqual([])
      expect((await op.api('GET', `/ops/actors/${id}`)).body.status).toBe('pending')
      expect((await op.api('POST', `/ops/dead-letters/${seq}/discard`, { reason: 'the owner asks again' })).body).toMatchObject({ resolution: 'discarded' })
    }
  })
})

describe('the timeline in pages', () => {
  it('an actor with more than 100 journal entries: the newest 100 first, nextCursor pages to the older ones, each entry once', async () => {
    const op = await app.account({ operator: true })
    const alice = await app.account()
    const id = randomUUID()
    const runtime = app.services.runtime
    await runtime.create('agent', { id, accountId: alice.accountId, input: { agentId: id, accountId: alice.accountId } })
    for (let i = 0; i < 65; i++) {
      await runtime.send(id, { type: 'agent.start' })
      await runtime.send(id, { type: 'agent.stop' })
    }
    // 1 + 130 journal entries.
    const first = await op.api('GET', `/ops/actors/${id}/timeline`)
    expect(first.status).toBe(200)
    const seqs = (body: { timeline: { type: string; seq?: number }[] }) => body.timeline.filter((e) => e.type === 'event').map((e) => e.seq!)
    expect(seqs(first.body)).toHaveLength(100)
    expect(first.body.nextCursor).toEqual(expect.any(String))
    const second = await op.api('GET', `/ops/actors/${id}/timeline?cursor=${encodeURIComponent(first.body.nextCursor)}`)
    expect(second.status).toBe(200)
    expect(seqs(second.body)).toHaveLength(31)
    expect(second.body.nextCursor).toBeNull()
    const all = [...seqs(second.body), ...seqs(first.body)]
    expect(all).toEqual([...all].sort((a, b) => a - b))
    expect(new Set(all).size).toBe(131)
    expect(second.body.timeline[0]).toMatchObject({ type: 'event', event: 'xstate.init' })
    // The other entries are split by the same span of time: each effect on exactly one page.
    const effectIds = [...first.body.timeline, ...second.body.timeline].filter((e: { type: string }) => e.type === 'effect').map((e: { id: string }) => e.id)
    const stored = (await app.services.pool.query('select id from effect where actor_id = $1', [id])).rows.map((r) => r.id as string)
    expect(stored.length).toBeGreaterThan(100)
    expect(effectIds.sort()).toEqual(stored.sort())
    // Smaller pages, and a cursor not signed by the service is refused.
    const small = await op.api('GET', `/ops/actors/${id}/timeline?limit=10`)
    expect(seqs(small.body)).toHaveLength(10)
    expect((await op.api('GET', `/ops/actors/${id}/timeline?cursor=${Buffer.from('5').toString('base64url')}`)).status).toBe(422)
    expect((await op.api('GET', `/ops/actors/${id}/timeline?limit=101`)).status).toBe(422)
    expect((await op.api('GET', `/ops/actors/${id}/timeline?nope=1`)).status).toBe(422)
  })

  it('an effect that failed twice: attempts made of its limit, the last error, the next try and each failed attempt', async () => {
    const op = await app.account({ operator: true })
    const alice = await app.account()
    const id = randomUUID()
    await app.services.runtime.create('agent', { id, accountId: alice.accountId, input: { agentId: id, accountId: alice.accountId } })
    const effectId = `${id}:probe`
    const claim = () => app.services.pool.query(`update effect set claimed_by = 'probe', lease_until = now() + interval '1 minute' where id = $1`, [effectId])
    await app.services.pool.query(
      `insert into effect (id, actor_id, account_id, kind, params, status, claimed_by, lease_until)
       values ($1, $2, $3, 'agent.probe', '{}', 'pending', 'probe', now() + interval '1 minute')`,
      [effectId, id, alice.accountId],
    )
    await deferEffect(app.services.pool, effectId, { owner: 'probe', delayMs: 600_000, error: 'rpc timeout' })
    await claim()
    await deferEffect(app.services.pool, effectId, { owner: 'probe', delayMs: 600_000, error: 'nonce too low' })
    const { timeline } = (await op.api('GET', `/ops/actors/${id}/timeline`)).body
    const effect = timeline.find((e: { id?: string }) => e.id === effectId)
    expect(effect).toMatchObject({
      type: 'effect', status: 'pending', attempts: 2, attemptsMade: 2, maxAttempts: 8, inFlight: false, lastError: 'nonce too low',
      lastAttemptAt: expect.any(String), nextAttemptAt: expect.any(String), endedAt: null, durationMs: null,
      failedAttempts: [
        { attempt: 1, endedAt: expect.any(String), error: 'rpc timeout' },
        { attempt: 2, endedAt: effect.lastAttemptAt, error: 'nonce too low' },
      ],
    })
    expect(Date.parse(effect.nextAttemptAt) - Date.parse(effect.lastAttemptAt)).toBe(600_000)
    await app.services.pool.query('delete from effect where id = $1', [effectId])
  })

  it('a timer that fired shows with its due time; a pending one as pending', async () => {
    const op = await app.account({ operator: true })
    const alice = await app.account()
    const id = randomUUID()
    await app.services.runtime.create('agent', { id, accountId: alice.accountId, input: { agentId: id, accountId: alice.accountId } })
    const due = new Date(Date.now() - 1000)
    await app.services.pool.query(
      `insert into actor_timer (actor_id, timer_key, account_id, generation, due_at, event) values ($1, 'nudge', $2, 1, $3, '{"type":"agent.stop"}')`,
      [id, alice.accountId, due],
    )
    await app.services.runtime.wake()
    await waitFor(async () => (await app.services.pool.query('select 1 from actor_timer where actor_id = $1', [id])).rowCount === 0)
    await app.services.runtime.send(id, { type: 'agent.start' })
    // Once the start's schedule check answered, an outcome that arms the agent's due timer (pending).
    const checked = async () => (await app.services.pool.query(`select 1 from actor_journal where actor_id = $1 and event->>'type' = 'agent.run.skipped'`, [id])).rowCount === 1
    await waitFor(checked)
    await app.services.runtime.send(id, { type: 'agent.run.skipped', effectId: 'fx', reason: 'not_due', runIntervalSeconds: 60, nextRunInMs: 60_000, dueAt: null })
    const { timeline } = (await op.api('GET', `/ops/actors/${id}/timeline`)).body
    const timers = timeline.filter((e: { type: string }) => e.type === 'timer')
    expect(timers).toContainEqual(expect.objectContaining({ key: 'nudge', fired: true, dueAt: due.toISOString(), firedAt: expect.any(String), seq: expect.any(Number) }))
    expect(timers.filter((t: { fired: boolean }) => !t.fired)).toEqual([expect.objectContaining({ key: expect.any(String), fired: false, dueAt: expect.any(String) })])
  })
})

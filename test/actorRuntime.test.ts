import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { assign, setup, type AnyEventObject } from 'xstate'
import { ActorEventRefusedError } from '../src/actors/runtime/actorErrors.ts'
import { createLogger } from '../src/logger.ts'
import { createActorRuntime } from '../src/actors/runtime/actorRuntime.ts'
import type { ActorKind, EffectHandler } from '../src/actors/runtime/actorKind.ts'
import { agentKind } from '../src/actors/agent/agent.machine.ts'
import { useMigratedDatabase } from './support/db.ts'

/** A small machine with one effect and one timer, to exercise the runtime's durability rules. */
const jobMachine = setup({
  types: {
    context: {} as { attempts: number; result: string | null },
    events: {} as
      | { type: 'job.run' }
      | { type: 'job.done'; value: string; effectId: string }
      | { type: 'job.work.failed'; error: string; effectId: string }
      | { type: 'job.arm'; ms: number }
      | { type: 'job.disarm' }
      | { type: 'xstate.after.alarm.job.armed' },
    input: {} as Record<string, never>,
  },
  actions: { 'job.work': (_, _p: { n: number }) => {} },
  delays: { alarm: 300 },
}).createMachine({
  id: 'job',
  initial: 'idle',
  context: { attempts: 0, result: null },
  states: {
    idle: { on: { 'job.run': 'working', 'job.arm': 'armed' } },
    working: {
      entry: [assign({ attempts: ({ context }) => context.attempts + 1 }), { type: 'job.work', params: { n: 7 } }],
      on: {
        'job.done': { target: 'done', actions: assign({ result: ({ event }) => event.value }) },
        'job.work.failed': 'failed',
      },
    },
    armed: {
      after: { alarm: { target: 'rang' } },
      on: { 'job.disarm': 'idle' },
    },
    rang: { on: { 'job.arm': 'armed' } },
    done: { type: 'final' },
    failed: { type: 'final' },
  },
})

const jobKind: ActorKind = {
  kind: 'job',
  machine: jobMachine,
  machineVersion: 1,
  parseEvent: (e) => e as AnyEventObject,
  statusOf: (s) => String(s.value),
  effects: ['job.work'],
}

const logger = createLogger({ level: 'silent' })
const db = useMigratedDatabase()

const waitFor = async (check: () => Promise<boolean>, ms = 5000) => {
  const until = Date.now() + ms
  while (Date.now() < until) {
    if (await check()) return
    await new Promise((r) => setTimeout(r, 25))
  }
  throw new Error('condition not met in time')
}

async function row(id: string) {
  const { rows } = await db().pool.query('select * from actor where id = $1', [id])
  return rows[0]
}

describe('actor runtime', () => {
  it('commits snapshot, journal and version per event; rejects events the state does not accept', async () => {
    const rt = createActorRuntime({ pool: db().pool, kinds: [agentKind], logger })
    const id = randomUUID()
    const accountId = randomUUID()
    await rt.create('agent', { id, accountId, input: { agentId: id, accountId } })
    const e = await rt.send(id, { type: 'agent.start' })
    expect(e.status).toBe('running')
    expect(await row(id)).toMatchObject({ status: 'running', version: '2' })
    await expect(rt.send(id, { type: 'agent.start' })).rejects.toBeInstanceOf(ActorEventRefusedError)
    const { rows: journal } = await db().pool.query('select seq, event from actor_journal where actor_id = $1 order by seq', [id])
    expect(journal.map((j) => j.event.type)).toEqual(['xstate.init', 'agent.start'])
    // No timer until a schedule check says when the next run is due; its outcome arms one.
    const timerKeys = async () => (await db().pool.query('select timer_key from actor_timer where actor_id = $1', [id])).rows.map((t) => t.timer_key)
    expect(await timerKeys()).toEqual([])
    await rt.send(id, { type: 'agent.run.skipped', effectId: 'fx', reason: 'not_due', runIntervalSeconds: 60, nextRunInMs: 60_000, dueAt: new Date(Date.now() + 60_000).toISOString() })
    expect(await timerKeys()).toEqual(['agent.due'])
    await rt.send(id, { type: 'agent.stop' })
    const { rowCount } = await db().pool.query('select 1 from actor_timer where actor_id = $1', [id])
    expect(rowCount).toBe(0)
  })

  it('a second runtime (another process) sees committed state and wins races by version', async () => {
    const a = createActorRuntime({ pool: db().pool, kinds: [agentKind], logger })
    const b = createActorRuntime({ pool: db().pool, kinds: [agentKind], logger })
    const id = randomUUID()
    const accountId = randomUUID()
    await a.create('agent', { id, accountId, input: { agentId: id, accountId } })
    await b.send(id, { type: 'agent.start' })
    // a's cache is stale (stopped, v1): its write loses the version race, reloads, and is refused.
    await expect(a.send(id, { type: 'agent.start' })).rejects.toMatchObject({ code: 'invalid_state' })
    const stopped = await a.send(id, { type: 'agent.stop' })
    expect(stopped.version).toBe(3)
  })

  it('runs an effect after commit exactly once and feeds its result back as an event', async () => {
    let calls = 0
    const work: EffectHandler = async (effect) => {
      calls++
      expect(effect.params).toEqual({ n: 7 })
      return { type: 'job.done', value: `ok-${effect.id}` }
    }
    const rt = createActorRuntime({ pool: db().pool, kinds: [jobKind], logger, effectHandlers: { 'job.work': work } })
    await rt.start()
    const id = randomUUID()
    await rt.create('job', { id, accountId: randomUUID(), input: {} })
    await rt.send(id, { type: 'job.run' })
    await waitFor(async () => (await row(id)).status === 'done')
    expect(calls).toBe(1)
    const { rows: effects } = await db().pool.query('select id, status from effect where actor_id = $1', [id])
    expect(effects).toEqual([{ id: `${id}:2:0`, status: "done" }])
    expect((await row(id)).snapshot.context.result).toBe(`ok-${id}:2:0`)
    await rt.stop()
  })

  it('resumes an effect left pending by a crash, and retries failures before giving up', async () => {
    const id = randomUUID()
    // First runtime commits the effect but "crashes" (never started, so nothing runs).
    const crashed = createActorRuntime({ pool: db().pool, kinds: [jobKind], logger })
    await crashed.create('job', { id, accountId: randomUUID(), input: {} })
    await crashed.send(id, { type: 'job.run' })
    expect((await db().pool.query('select status from effect where actor_id = $1', [id])).rows[0].status).toBe('pending')
    let calls = 0
    const flaky: EffectHandler = async () => {
      calls++
      throw new Error('provider down')
    }
    const rt = createActorRuntime({
      pool: db().pool, kinds: [jobKind], logger, effectHandlers: { 'job.work': flaky }, maxEffectAttempts: 2, pollMs: 50,
    })
    await rt.start()
    await waitFor(async () => (await row(id)).status === 'failed')
    await rt.stop()
    expect(calls).toBe(2)
    const { rows } = await db().pool.query('select status, attempts, last_error from effect where actor_id = $1', [id])
    expect(rows[0]).toMatchObject({ status: 'failed', last_error: 'provider down' })
  })

  it('a due timer fires once; a cancelled timer never fires even when already claimed', async () => {
    const rt = createActorRuntime({ pool: db().pool, kinds: [jobKind], logger, pollMs: 50 })
    const id = randomUUID()
    await rt.create('job', { id, accountId: randomUUID(), input: {} })
    await rt.send(id, { type: 'job.arm', ms: 0 })
    await rt.start()
    await waitFor(async () => (await row(id)).status === 'rang')
    await rt.stop()

    // Cancelled after the scheduler already turned the timer into an inbox event: stale, dropped.
    const id2 = randomUUID()
    const rt2 = createActorRuntime({ pool: db().pool, kinds: [jobKind], logger, pollMs: 50 })
    await rt2.create('job', { id: id2, accountId: randomUUID(), input: {} })
    await rt2.send(id2, { type: 'job.arm', ms: 0 })
    await db().pool.query(`update actor_timer set due_at = now() - interval '1 second' where actor_id = $1`, [id2])
    const claim = await import('../src/actors/runtime/actorStore.ts').then((s) => s.claimDueTimers(db().pool))
    expect(claim).toContain(id2)
    await rt2.send(id2, { type: 'job.disarm' })
    await rt2.send(id2, { type: 'job.arm', ms: 0 })
    // Hold the new timer back so that only the stale event can act until it has been handled.
    await db().pool.query(`update actor_timer set due_at = now() + interval '1 hour' where actor_id = $1`, [id2])
    await rt2.start()
    const unprocessed = async () =>
      (await db().pool.query(`select count(*)::int as n from actor_inbox where actor_id = $1 and processed_at is null`, [id2])).rows[0].n
    await waitFor(async () => (await unprocessed()) === 0)
    // The old generation was dropped; the new timer has not fired.
    expect((await row(id2)).status).toBe('armed')
    await db().pool.query(`update actor_timer set due_at = now() where actor_id = $1`, [id2])
    await waitFor(async () => (await row(id2)).status === 'rang')
    await rt2.stop()
    const { rows } = await db().pool.query(
      `select event->>'type' as type from actor_journal where actor_id = $1 order by seq`, [id2])
    expect(rows.filter((r) => r.type === 'xstate.after.alarm.job.armed')).toHaveLength(1)
  })

  it('keeps a bounded number of actors in memory', async () => {
    const rt = createActorRuntime({ pool: db().pool, kinds: [agentKind], logger, cacheSize: 5 })
    const accountId = randomUUID()
    for (let i = 0; i < 12; i++) {
      const id = randomUUID()
      await rt.create('agent', { id, accountId, input: { agentId: id, accountId } })
    }
    expect(rt.cachedCount()).toBe(5)
  })
})

describe('group commit', () => {
  it('commits many actors\' transitions in shared statements, each with its own journal row and timers', async () => {
    // One statement in flight at a time: everything sent meanwhile has to share the next one.
    // The pool is wrapped only to count the commit statements that reach Postgres.
    const commits: number[] = []
    const counting = new Proxy(db().pool, {
      get(target, prop, receiver) {
        if (prop !== 'query') return Reflect.get(target, prop, receiver)
        return (q: unknown, values?: unknown) => {
          const name = (q as { name?: string }).name
          if (name === 'actor.commit') commits.push(JSON.parse((q as { values: string[] }).values[0]!).length)
          return target.query(q as never, values as never)
        }
      },
    })
    const rt = createActorRuntime({ pool: counting, kinds: [agentKind], logger, commitConcurrency: 1 })
    const accountId = randomUUID()
    const ids = Array.from({ length: 30 }, () => randomUUID())
    for (const id of ids) await rt.create('agent', { id, accountId, input: { agentId: id, accountId } })
    const started = await Promise.all(ids.map((id) => rt.send(id, { type: 'agent.start' })))
    expect(started.map((e) => [e.status, e.version])).toEqual(ids.map(() => ['running', 2]))
    // Each schedule check's outcome arms the agent's due timer.
    const armed = await Promise.all(ids.map((id) => rt.send(id, { type: 'agent.run.skipped', effectId: 'fx', reason: 'not_due', runIntervalSeconds: 60, nextRunInMs: 60_000, dueAt: null })))
    expect(armed.map((e) => e.version)).toEqual(ids.map(() => 3))
    const { rows } = await db().pool.query(
      `select x.status, x.version::int as version, (select count(*)::int from actor_journal j where j.actor_id = x.id) as journal,
              (select count(*)::int from actor_timer t where t.actor_id = x.id) as timers
         from actor x where x.id = any($1::text[])`,
      [ids],
    )
    expect(rows).toHaveLength(30)
    expect(rows.every((r) => r.status === 'running' && r.version === 3 && r.journal === 3 && r.timers === 1)).toBe(true)
    // Stopping in the same burst deletes the timers again, through the batched statement.
    await Promise.all(ids.map((id) => rt.send(id, { type: 'agent.stop' })))
    const { rows: [left] } = await db().pool.query('select count(*)::int as n from actor_timer where actor_id = any($1::text[])', [ids])
    expect(left.n).toBe(0)
    // 90 transitions, every one committed exactly once, in far fewer statements.
    expect(commits.reduce((a, b) => a + b, 0)).toBe(90)
    expect(commits.length).toBeLessThanOrEqual(15)
  })

  it('group commit sends a second statement beside one in flight only while a full batch waits', async () => {
    const { createGroupCommitter } = await import('../src/actors/runtime/groupCommit.ts')
    const rt = createActorRuntime({ pool: db().pool, kinds: [agentKind], logger })
    const accountId = randomUUID()
    const ids = Array.from({ length: 300 }, () => randomUUID())
    for (const id of ids) await rt.create('agent', { id, accountId, input: { agentId: id, accountId } })
    // The statements in flight at once, on the real pool.
    let inFlight = 0
    let most = 0
    const sizes: number[] = []
    const pool = {
      query: async (q: { values?: unknown[] }) => {
        most = Math.max(most, ++inFlight)
        sizes.push(JSON.parse(String(q.values?.[0] ?? '[]')).length)
        try {
          return await db().pool.query(q as never)
        } finally {
          inFlight--
        }
      },
    }
    const committer = createGroupCommitter(pool as never, { maxConcurrent: 2 })
    const params = (id: string, expectedVersion: number) => ({
      id, expectedVersion, snapshot: {}, status: 'stopped', stateValue: 'stopped', timers: {}, event: { type: 'test' },
      inboxSeq: null, effects: [], timerDeletes: [], timerUpserts: [],
    })
    // Fewer than a batch behind one in flight: they wait for it and share the next statement.
    const first = committer.commit(params(ids[0]!, 1))
    await new Promise((r) => setImmediate(r))
    expect(inFlight).toBe(1)
    const few = await Promise.all([first, ...ids.slice(1, 40).map((id) => committer.commit(params(id, 1)))])
    expect(few.every((v) => v === 2)).toBe(true)
    expect(most).toBe(1)
    // A burst: a second statement goes out beside the first.
    const burst = await Promise.all(ids.map((id, i) => committer.commit(params(id, i < 40 ? 2 : 1))))
    expect(burst.every((v, i) => v === (i < 40 ? 3 : 2))).toBe(true)
    expect(most).toBe(2)
    expect(Math.max(...sizes)).toBeLessThanOrEqual(64)
  })

  it('a transition that lost its version race in a shared statement is retried alone; the others commit', async () => {
    const { createGroupCommitter } = await import('../src/actors/runtime/groupCommit.ts')
    const a = createActorRuntime({ pool: db().pool, kinds: [agentKind], logger, commitConcurrency: 1 })
    const b = createActorRuntime({ pool: db().pool, kinds: [agentKind], logger })
    const accountId = randomUUID()
    const ids = Array.from({ length: 5 }, () => randomUUID())
    for (const id of ids) await a.create('agent', { id, accountId, input: { agentId: id, accountId } })
    // b moves the first agent behind a's back: a's cached version 1 is stale for it.
    await b.send(ids[0]!, { type: 'agent.start' })
    const results = await Promise.allSettled(ids.map((id) => a.send(id, { type: 'agent.start' })))
    expect(results[0]).toMatchObject({ status: 'rejected', reason: { code: 'invalid_state' } })
    expect(results.slice(1).every((r) => r.status === 'fulfilled' && r.value.version === 2)).toBe(true)
    expect((await row(ids[0]!)).version).toBe('2')

    // A batch that fails as a whole (here: an effect id that already exists) is retried one by
    // one, so only the bad transition fails.
    const committer = createGroupCommitter(db().pool, { maxConcurrent: 1 })
    const x = randomUUID()
    const y = randomUUID()
    for (const id of [x, y]) await a.create('agent', { id, accountId, input: { agentId: id, accountId } })
    await db().pool.query(`insert into effect (id, actor_id, account_id, kind, params, status) values ('dup-effect', $1, $2, 'k', '{}', 'done')`, [x, accountId])
    const params = (id: string, effects: Array<{ id: string; kind: string; params: unknown }>) => ({
      id, expectedVersion: 1, snapshot: {}, status: 'stopped', stateValue: 'stopped', timers: {}, event: { type: 'test' },
      inboxSeq: null, effects, timerDeletes: [], timerUpserts: [],
    })
    const [bad, good] = await Promise.allSettled([
      committer.commit(params(x, [{ id: 'dup-effect', kind: 'k', params: {} }])),
      committer.commit(params(y, [])),
    ])
    expect(bad).toMatchObject({ status: 'rejected', reason: { code: '23505' } })
    expect(good).toEqual({ status: 'fulfilled', value: 2 })
    expect((await row(x)).version).toBe('1')
    expect((await row(y)).version).toBe('2')
  })
})

/** Accepts `inc` in any state: applying one event twice would show as count 2. */
const counterMachine = setup({
  types: { context: {} as { count: number }, events: {} as { type: 'inc' }, input: {} as Record<string, never> },
}).createMachine({
  id: 'counter',
  context: { count: 0 },
  on: { inc: { actions: assign({ count: ({ context }) => context.count + 1 }) } },
})
const counterKind: ActorKind = {
  kind: 'counter',
  machine: counterMachine,
  machineVersion: 1,
  parseEvent: (e) => e as AnyEventObject,
  statusOf: () => 'active',
  effects: [],
}

describe('two nodes draining the same inbox', () => {
  it('an inbox event is applied once even when both nodes read it before either commits', async () => {
    const store = await import('../src/actors/runtime/actorStore.ts')
    const accountId = randomUUID()
    const id = randomUUID()
    const a = createActorRuntime({ pool: db().pool, kinds: [counterKind], logger, pollMs: 60_000 })
    await a.create('counter', { id, accountId, input: {} })
    await store.enqueue(db().pool, { actorId: id, accountId, event: { type: 'inc' }, dedupeKey: `inc:${id}` })

    // Node B reads the inbox row, then its commit is held until node A has applied the same row.
    let release!: () => void
    const held = new Promise<void>((r) => (release = r))
    let bReachedCommit!: () => void
    const bAtCommit = new Promise<void>((r) => (bReachedCommit = r))
    const slowPool = new Proxy(db().pool, {
      get(target, prop, receiver) {
        if (prop !== 'query') return Reflect.get(target, prop, receiver)
        return async (q: unknown, values?: unknown) => {
          if ((q as { name?: string }).name === 'actor.commit') {
            bReachedCommit()
            await held
          }
          return target.query(q as never, values as never)
        }
      },
    })
    const b = createActorRuntime({ pool: slowPool, kinds: [counterKind], logger, pollMs: 60_000 })
    const bDone = b.start()
    await bAtCommit
    // Node B holds every shard; node A drains the actor as a node that took a command for it does.
    await a.start()
    await a.enqueue(id, accountId, { type: 'inc' }, `inc:${id}`)
    expect((await row(id)).snapshot.context.count).toBe(1)
    release()
    await bDone
    await a.stop()
    await b.stop()

    const after = await row(id)
    expect(after.snapshot.context.count).toBe(1)
    expect(after.version).toBe('2')
    const { rows } = await db().pool.query(`select count(*)::int as n from actor_journal where actor_id = $1 and event->>'type' = 'inc'`, [id])
    expect(rows[0].n).toBe(1)
  })

  it('the commit statements refuse an inbox row that is already processed, alone or in a batch', async () => {
    const store = await import('../src/actors/runtime/actorStore.ts')
    const rt = createActorRuntime({ pool: db().pool, kinds: [counterKind], logger })
    const accountId = randomUUID()
    const [x, y] = [randomUUID(), randomUUID()]
    for (const id of [x, y]) await rt.create('counter', { id, accountId, input: {} })
    for (const id of [x, y]) await store.enqueue(db().pool, { actorId: id, accountId, event: { type: 'inc' }, dedupeKey: `inc:${id}` })
    const seqOf = async (id: string) => (await db().pool.query('select seq::text from actor_inbox where actor_id = $1', [id])).rows[0].seq as string
    const [sx, sy] = [await seqOf(x), await seqOf(y)]
    await store.markInboxProcessed(db().pool, sx)
    const params = (id: string, inboxSeq: string) => ({
      id, expectedVersion: 1, snapshot: { context: { count: 1 } }, status: 'active', stateValue: {}, timers: {}, event: { type: 'inc' },
      inboxSeq, effects: [], timerDeletes: [], timerUpserts: [],
    })
    expect(await store.commitTransition(db().pool, params(x, sx))).toBeUndefined()
    expect(await store.commitTransitions(db().pool, [params(x, sx), params(y, sy)])).toEqual([undefined, 2])
    expect((await row(x)).version).toBe('1')
    expect((await row(y)).version).toBe('2')
    expect(await store.inboxProcessed(db().pool, sy)).toBe(true)
  })
})

describe('the timer poller at rest', () => {
  it('has no next timer when there are none (it must not poll in a loop)', async () => {
    const store = await import('../src/actors/runtime/actorStore.ts')
    await db().pool.query('delete from actor_timer')
    expect(await store.nextTimerDelay(db().pool)).toBeUndefined()
    const id = randomUUID()
    const accountId = randomUUID()
    const rt = createActorRuntime({ pool: db().pool, kinds: [agentKind], logger })
    await rt.create('agent', { id, accountId, input: { agentId: id, accountId } })
    await rt.send(id, { type: 'agent.start' })
    // Running, no run scheduled yet: no timer.
    expect(await store.nextTimerDelay(db().pool)).toBeUndefined()
    await rt.send(id, { type: 'agent.run.skipped', effectId: 'fx', reason: 'not_due', runIntervalSeconds: 60, nextRunInMs: 60_000, dueAt: null })
    const ms = await store.nextTimerDelay(db().pool)
    expect(ms).toBeGreaterThan(59_000)
    expect(ms).toBeLessThanOrEqual(60_000)
  })
})

import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { assign, setup, type AnyEventObject } from 'xstate'
import { z } from 'zod'
import { createLogger } from '../src/logger.ts'
import { createActorRuntime } from '../src/actors/runtime/actorRuntime.ts'
import type { ActorKind, EffectHandler } from '../src/actors/runtime/actorKind.ts'
import { childEndEventSchema, childIdOf, SPAWN_CHILD, type ChildEndEvent, type SpawnChildParams } from '../src/actors/runtime/childActors.ts'
import { ValidationError } from '../src/domain/errors.ts'
import * as store from '../src/actors/runtime/actorStore.ts'
import { AGENT_DUE, agentKind, CHECK_RETRY_MS } from '../src/actors/agent/agent.machine.ts'
import { useMigratedDatabase } from './support/db.ts'
import { waitFor } from './support/waitFor.ts'

/** A child: one effect, then `ok` (output: the value) or `failed`. */
const childMachine = setup({
  types: {
    context: {} as { n: number; value: string | null },
    events: {} as { type: 'task.finished'; value: string; effectId: string } | { type: 'task.work.failed'; error: string; effectId: string },
    input: {} as { n: number },
  },
  actions: { 'task.work': (_, _p: { n: number }) => {} },
}).createMachine({
  id: 'task',
  initial: 'working',
  context: ({ input }) => ({ n: input.n, value: null }),
  states: {
    working: {
      entry: { type: 'task.work', params: ({ context }) => ({ n: context.n }) },
      on: { 'task.finished': { target: 'ok', actions: assign({ value: ({ event }) => event.value }) }, 'task.work.failed': 'failed' },
    },
    ok: { type: 'final' },
    failed: { type: 'final' },
  },
  output: ({ context }) => ({ value: context.value }),
})
const taskEvents = z.discriminatedUnion('type', [
  z.object({ type: z.literal('task.finished'), value: z.string(), effectId: z.string() }),
  z.object({ type: z.literal('task.work.failed'), error: z.string(), effectId: z.string() }),
])
const taskKind: ActorKind = {
  kind: 'task',
  machine: childMachine,
  machineVersion: 1,
  parseEvent: (e) => {
    const p = taskEvents.safeParse(e)
    if (!p.success) throw new ValidationError({ type: 'unknown task event' })
    return p.data
  },
  statusOf: (s) => String(s.value),
  effects: ['task.work'],
}

/** A parent that starts two children and collects how each ended. */
const parentMachine = setup({
  types: {
    context: {} as { results: Record<string, { type: string; output: unknown }> },
    events: {} as { type: 'go' } | ChildEndEvent,
  },
  actions: { [SPAWN_CHILD]: (_, _p: SpawnChildParams) => {} },
}).createMachine({
  id: 'parent',
  initial: 'idle',
  context: { results: {} },
  states: {
    idle: {
      on: {
        go: {
          target: 'waiting',
          actions: [
            { type: SPAWN_CHILD, params: { kind: 'task', key: 'good', input: { n: 1 } } },
            { type: SPAWN_CHILD, params: { kind: 'task', key: 'bad', input: { n: -1 } } },
          ],
        },
      },
    },
    waiting: {
      on: {
        'child.*': {
          actions: assign({ results: ({ context, event }) => ({ ...context.results, [(event as ChildEndEvent).key]: { type: event.type, output: (event as ChildEndEvent).output } }) }),
        },
      },
      always: { guard: ({ context }) => Object.keys(context.results).length === 2, target: 'collected' },
    },
    collected: { type: 'final' },
  },
})
const parentKind: ActorKind = {
  kind: 'parent',
  machine: parentMachine,
  machineVersion: 1,
  parseEvent: (e) => {
    const p = z.union([z.object({ type: z.literal('go') }), childEndEventSchema]).safeParse(e)
    if (!p.success) throw new ValidationError({ type: 'unknown parent event' })
    return p.data as AnyEventObject
  },
  statusOf: (s) => String(s.value),
  effects: [],
}

const work: EffectHandler = async (effect) => {
  const { n } = effect.params as { n: number }
  if (n < 0) throw new Error('negative work')
  return { type: 'task.finished', value: `worked-${n}` }
}

const logger = createLogger({ level: 'silent' })
const db = useMigratedDatabase()

const row = async (id: string) => (await db().pool.query('select * from actor where id = $1', [id])).rows[0]

describe('parent and child actors', () => {
  it('a parent starts children under stable ids and hears child.done / child.failed with their output, once each', async () => {
    const rt = createActorRuntime({
      pool: db().pool, kinds: [parentKind, taskKind], logger, pollMs: 50, maxEffectAttempts: 1, effectHandlers: { 'task.work': work },
    })
    await rt.start()
    const id = randomUUID()
    await rt.create('parent', { id, accountId: randomUUID(), input: {} })
    await rt.send(id, { type: 'go' })
    await waitFor(async () => (await row(id)).status === 'collected')
    expect((await row(id)).snapshot.context.results).toEqual({
      good: { type: 'child.done', output: { value: 'worked-1' } },
      bad: { type: 'child.failed', output: { value: null } },
    })
    const good = await row(childIdOf(id, 'good'))
    expect(good).toMatchObject({ kind: 'task', status: 'ok', parent_id: id })
    expect((await row(childIdOf(id, 'bad'))).status).toBe('failed')

    // Starting a child again (a retried spawn effect) finds the same child; its end is not delivered twice.
    const { rows: spawns } = await db().pool.query(`select id from effect where actor_id = $1 and kind = $2`, [id, SPAWN_CHILD])
    expect(spawns).toHaveLength(2)
    await db().pool.query(`update effect set status = 'pending', claimed_by = null, lease_until = null where actor_id = $1`, [id])
    await waitFor(async () => (await db().pool.query(`select count(*)::int as n from effect where actor_id = $1 and status = 'done'`, [id])).rows[0].n === 2)
    const { rows: children } = await db().pool.query('select id from actor where parent_id = $1 order by id', [id])
    expect(children.map((c) => c.id)).toEqual([childIdOf(id, 'bad'), childIdOf(id, 'good')])
    const { rows: inbox } = await db().pool.query(`select dedupe_key from actor_inbox where actor_id = $1 order by dedupe_key`, [id])
    expect(inbox.map((r) => r.dedupe_key)).toEqual([`child:${childIdOf(id, 'bad')}`, `child:${childIdOf(id, 'good')}`])
    await rt.stop()
  })
})

describe('transitions that only ask for something', () => {
  it('are committed, not taken for refusals: a running agent whose schedule check failed for good arms its retry timer', async () => {
    // No handler for the check: its one attempt fails, and `agent.runDue.failed` only raises a delayed event.
    const rt = createActorRuntime({ pool: db().pool, kinds: [agentKind], logger, pollMs: 50, maxEffectAttempts: 1, effectHandlers: {} })
    await rt.start()
    const id = randomUUID()
    await rt.create('agent', { id, accountId: randomUUID(), input: { agentId: id, accountId: randomUUID(), runIntervalSeconds: 60 } })
    await rt.send(id, { type: 'agent.start' })
    await waitFor(async () => (await db().pool.query(`select 1 from actor_journal where actor_id = $1 and event->>'type' = 'agent.runDue.failed'`, [id])).rowCount === 1)
    const { rows } = await db().pool.query(`select timer_key as key, extract(epoch from due_at - now()) * 1000 as in_ms from actor_timer where actor_id = $1`, [id])
    expect(rows).toHaveLength(1)
    expect(rows[0].key).toBe(AGENT_DUE)
    expect(Number(rows[0].in_ms)).toBeGreaterThan(CHECK_RETRY_MS - 5000)
    expect((await row(id)).status).toBe('running')
    await rt.stop()
  })
})

describe('a write alongside an actor insert', () => {
  it('goes out in the same statement: both are written, or neither when the insert fails', async () => {
    await db().pool.query('create table if not exists alongside_probe (id text primary key, n int not null)')
    const rt = createActorRuntime({ pool: db().pool, kinds: [agentKind], logger, pollMs: 50, effectHandlers: {} })
    const id = randomUUID()
    const accountId = randomUUID()
    const probe = (n: number) => ({ name: 'alongside.probe', with: [{ as: 'probe', sql: 'insert into alongside_probe (id, n) values ($1, $2)' }], values: [`${id}:${n}`, n] })
    const input = { agentId: id, accountId, runIntervalSeconds: 0 }
    await rt.create('agent', { id, accountId, input, alongside: probe(1) })
    // The same id again: the actor's insert fails, and the write with it is not made either.
    await expect(rt.create('agent', { id, accountId, input, alongside: probe(2) })).rejects.toMatchObject({ code: '23505' })
    const { rows } = await db().pool.query('select n from alongside_probe where id like $1 order by n', [`${id}:%`])
    expect(rows).toEqual([{ n: 1 }])
    expect((await row(id)).version).toBe('1')
  })
})

describe('dead letters', () => {
  it('a malformed inbox event or effect result is kept as a dead letter and its actor marked stuck; later events still apply', async () => {
    const rt = createActorRuntime({
      pool: db().pool, kinds: [taskKind], logger, pollMs: 50,
      // The handler's result lacks `value`: it fails the task kind's event schema.
      effectHandlers: { 'task.work': async () => ({ type: 'task.finished' }) },
    })
    await rt.start()
    const id = randomUUID()
    const accountId = randomUUID()
    await rt.create('task', { id, accountId, input: { n: 1 } })
    await waitFor(async () => (await row(id)).stuck_reason !== null)
    const dead = await db().pool.query(`select event, error, processed_at is not null as processed from actor_inbox where actor_id = $1 and dead_at is not null`, [id])
    expect(dead.rows).toEqual([{ event: { type: 'task.finished', effectId: `${id}:1:0` }, error: expect.stringContaining('unknown task event'), processed: true }])
    expect((await row(id)).stuck_reason).toMatch(/dead letter .*unknown task event/)
    expect((await row(id)).status).toBe('working')
    // An operator can still move it on with a valid event.
    await rt.enqueue(id, accountId, { type: 'task.finished', value: 'by hand', effectId: 'operator' }, `fix:${id}`)
    expect((await row(id)).status).toBe('ok')
    await rt.stop()
  })
})

describe('decisions on the current version', () => {
  it('a refusal taken on a stale cached copy is decided again on the row', async () => {
    const a = createActorRuntime({ pool: db().pool, kinds: [taskKind, parentKind], logger })
    const b = createActorRuntime({ pool: db().pool, kinds: [taskKind, parentKind], logger })
    const id = randomUUID()
    await a.create('parent', { id, accountId: randomUUID(), input: {} })
    await a.get(id)
    // b moves the row on; a's cache still says `idle`, where `child.*` is refused.
    await b.send(id, { type: 'go' })
    const event = { type: 'child.done', childId: childIdOf(id, 'good'), key: 'good', status: 'ok', output: { value: 'x' } }
    const after = await a.send(id, event)
    expect(after.version).toBe(3)
    expect((await row(id)).snapshot.context.results).toEqual({ good: { type: 'child.done', output: { value: 'x' } } })
  })

  it('an inbox event refused on a stale cached copy is not dropped: the version check sends it to the current state', async () => {
    const a = createActorRuntime({ pool: db().pool, kinds: [taskKind, parentKind], logger })
    const b = createActorRuntime({ pool: db().pool, kinds: [taskKind, parentKind], logger })
    const id = randomUUID()
    const accountId = randomUUID()
    await a.create('parent', { id, accountId, input: {} })
    await b.send(id, { type: 'go' })
    // a still caches `idle` (version 1); the event waits in the inbox and a processes it.
    await store.enqueue(db().pool, { actorId: id, accountId, dedupeKey: `late:${id}`, event: { type: 'child.failed', childId: childIdOf(id, 'bad'), key: 'bad', status: 'failed', output: null } })
    await a.start()
    await waitFor(async () => (await db().pool.query('select processed_at from actor_inbox where dedupe_key = $1', [`late:${id}`])).rows[0].processed_at !== null)
    await a.stop()
    expect((await row(id)).snapshot.context.results).toEqual({ bad: { type: 'child.failed', output: null } })
    const { rows } = await db().pool.query(`select event->>'type' as type from actor_journal where actor_id = $1 order by seq`, [id])
    expect(rows.map((r) => r.type)).toEqual(['xstate.init', 'go', 'child.failed'])
  })
})

describe('snapshot versions', () => {
  const v2 = (migrate?: ActorKind['migrate']): ActorKind => ({ ...taskKind, machineVersion: 2, ...(migrate ? { migrate } : {}) })

  it('an actor stored by an older machine version is migrated by the kind, or refused with its id and marked stuck', async () => {
    const v1 = createActorRuntime({ pool: db().pool, kinds: [taskKind], logger })
    const [x, y] = [randomUUID(), randomUUID()]
    for (const id of [x, y]) await v1.create('task', { id, accountId: randomUUID(), input: { n: 5 } })

    const refusing = createActorRuntime({ pool: db().pool, kinds: [v2()], logger })
    await expect(refusing.get(x)).rejects.toMatchObject({
      code: 'actor_unloadable',
      message: expect.stringMatching(new RegExp(`Actor ${x} cannot be loaded: .*machine version 1; this build runs version 2 and declares no migration`)),
    })
    expect((await row(x)).stuck_reason).toMatch(/version 1/)

    const migrating = createActorRuntime({
      pool: db().pool, logger,
      kinds: [v2((s, from) => {
        expect(from).toBe(1)
        const snap = s as { context: { n: number } }
        return { ...snap, context: { ...snap.context, n: snap.context.n * 10 } }
      })],
    })
    const entry = await migrating.get(y)
    expect(entry?.snapshot.context).toEqual({ n: 50, value: null })
    // The migration is committed as a version of its own, with its journal entry.
    expect(await row(y)).toMatchObject({ machine_version: 2, version: '2', stuck_reason: null })
    const done = await migrating.send(y, { type: 'task.finished', value: 'v2', effectId: 'e' })
    expect(done.status).toBe('ok')
  })

  it('a malformed snapshot is refused with the actor named', async () => {
    const rt = createActorRuntime({ pool: db().pool, kinds: [taskKind], logger })
    const id = randomUUID()
    await rt.create('task', { id, accountId: randomUUID(), input: { n: 1 } })
    await db().pool.query(`update actor set snapshot = jsonb_set(snapshot, '{value}', '"vanished"') where id = $1`, [id])
    const fresh = createActorRuntime({ pool: db().pool, kinds: [taskKind], logger })
    await expect(fresh.get(id)).rejects.toMatchObject({ code: 'actor_unloadable', message: expect.stringContaining(`Actor ${id} cannot be loaded`) })
    expect((await row(id)).stuck_at).not.toBeNull()
  })
})

describe('waiting for an outcome', () => {
  it('waitFor wakes on the commit that satisfies it, reading the actor no more while it waits; on timeout it answers the latest state', async () => {
    let release!: () => void
    const gate = new Promise<void>((r) => (release = r))
    let loads = 0
    const id = randomUUID()
    const watched = id
    const counting = new Proxy(db().pool, {
      get(target, prop, receiver) {
        if (prop !== 'query') return Reflect.get(target, prop, receiver)
        return (q: unknown, values?: unknown) => {
          const query = q as { name?: string; values?: unknown[] }
          if (query.name === 'actor.load' && query.values?.[0] === watched) loads++
          return target.query(q as never, values as never)
        }
      },
    })
    const rt = createActorRuntime({
      pool: counting, kinds: [taskKind], logger, pollMs: 60_000,
      effectHandlers: { 'task.work': async () => (await gate, { type: 'task.finished', value: 'late' }) },
    })
    await rt.start()
    await rt.create('task', { id, accountId: randomUUID(), input: { n: 1 } })
    const ended = (e: { status: string }) => e.status === 'ok' || e.status === 'failed'

    const timedOut = await rt.waitFor(id, ended, 100)
    expect(timedOut?.status).toBe('working')

    const waiting = rt.waitFor(id, ended, 10_000)
    const loadsBefore = loads
    release()
    const done = await waiting
    expect(done?.status).toBe('ok')
    expect(done?.snapshot.context.value).toBe('late')
    expect(loads).toBe(loadsBefore) // woken by the commit, not by reading the row
    expect(await rt.waitFor(randomUUID(), ended, 100)).toBeUndefined()
    await rt.stop()
  })
})

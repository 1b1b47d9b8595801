import { spawnSync } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { assign, setup, type AnyEventObject } from 'xstate'
import type pg from 'pg'
import { createLogger } from '../src/logger.ts'
import { createActorRuntime } from '../src/actors/runtime/actorRuntime.ts'
import type { ActorKind, EffectHandler } from '../src/actors/runtime/actorKind.ts'
import { claimEffects, finishEffect, renewLease } from '../src/actors/runtime/effectStore.ts'
import { retireNode } from '../src/actors/runtime/shardLease.store.ts'
import { useMigratedDatabase } from './support/db.ts'
import { waitFor } from './support/waitFor.ts'

/** One effect (`slow.work`) that reports `slow.done`. */
const slowMachine = setup({
  types: {
    context: {} as { result: string | null },
    events: {} as { type: 'slow.run' } | { type: 'slow.done'; value: string; effectId: string },
  },
  actions: { 'slow.work': () => {} },
}).createMachine({
  id: 'slow',
  initial: 'idle',
  context: { result: null },
  states: {
    idle: { on: { 'slow.run': 'working' } },
    working: { entry: 'slow.work', on: { 'slow.done': { target: 'done', actions: assign({ result: ({ event }) => event.value }) } } },
    done: { type: 'final' },
  },
})
const slowKind: ActorKind = {
  kind: 'slow',
  machine: slowMachine,
  machineVersion: 1,
  parseEvent: (e) => e as AnyEventObject,
  statusOf: (s) => String(s.value),
  effects: ['slow.work'],
}

const logger = createLogger({ level: 'silent' })
const db = useMigratedDatabase()

/** The pool, counting the polls for due effects this runtime makes. */
function countingPolls(pool: pg.Pool) {
  const counter = { polls: 0 }
  const proxy = new Proxy(pool, {
    get(target, prop, receiver) {
      if (prop !== 'query') return Reflect.get(target, prop, receiver)
      return (q: unknown, values?: unknown) => {
        if ((q as { name?: string }).name === 'effect.claim.due') counter.polls++
        return target.query(q as never, values as never)
      }
    },
  })
  return { pool: proxy, counter }
}

const status = async (id: string) => (await db().pool.query('select status from actor where id = $1', [id])).rows[0]?.status

describe('effect leases across two runtimes on one database', () => {
  it('a slow effect handler is entered exactly once while both runtimes poll', async () => {
    let entered = 0
    let release!: () => void
    const gate = new Promise<void>((r) => (release = r))
    const slow: EffectHandler = async (effect) => {
      entered++
      await gate
      return { type: 'slow.done', value: `by-${effect.id}` }
    }
    const a = countingPolls(db().pool)
    const b = countingPolls(db().pool)
    // Short shard leases: the two runtimes split the shards within a second, and each polls its own.
    const opts = { kinds: [slowKind], logger, effectHandlers: { 'slow.work': slow }, pollMs: 30, shardLeaseMs: 300 }
    const ra = createActorRuntime({ ...opts, pool: a.pool, nodeId: 'node-a' })
    const rb = createActorRuntime({ ...opts, pool: b.pool, nodeId: 'node-b' })
    await Promise.all([ra.start(), rb.start()])
    const id = randomUUID()
    await ra.create('slow', { id, accountId: randomUUID(), input: {} })
    await ra.send(id, { type: 'slow.run' })
    await waitFor(() => entered === 1)
    // Both keep polling for due effects while the handler runs; neither enters it again.
    const [pa, pb] = [a.counter.polls, b.counter.polls]
    await waitFor(() => a.counter.polls >= pa + 5 && b.counter.polls >= pb + 5)
    expect(entered).toBe(1)
    const { rows } = await db().pool.query('select claimed_by, lease_until > now() as leased from effect where actor_id = $1', [id])
    expect(rows).toEqual([{ claimed_by: 'node-a', leased: true }])
    release()
    await waitFor(async () => (await status(id)) === 'done')
    expect(entered).toBe(1)
    const effect = (await db().pool.query('select status, lease_until from effect where actor_id = $1', [id])).rows[0]
    expect(effect).toEqual({ status: 'done', lease_until: null })
    await Promise.all([ra.stop(), rb.stop()])
  })

  it('an expired lease is taken over by the other runtime; the first one cannot finish it any more', async () => {
    const entries: string[] = []
    const hang = new Promise<never>(() => {})
    // Node A claims the effect with a short lease, then stalls (as a crashed or frozen node would).
    const ra = createActorRuntime({
      pool: db().pool, kinds: [slowKind], logger, nodeId: 'node-a', effectLeaseMs: 400, pollMs: 60_000,
      effectHandlers: { 'slow.work': async (e) => (entries.push(`a first run: ${e.firstRun}`), hang) },
    })
    await ra.start()
    const id = randomUUID()
    await ra.create('slow', { id, accountId: randomUUID(), input: {} })
    await ra.send(id, { type: 'slow.run' })
    await waitFor(() => entries.length === 1)
    void ra.stop() // stops renewing the lease; its handler never returns (so stop would wait its 5 s grace)
    const rb = createActorRuntime({
      pool: db().pool, kinds: [slowKind], logger, nodeId: 'node-b', pollMs: 30, shardLeaseMs: 600,
      effectHandlers: { 'slow.work': async (e) => (entries.push(`b first run: ${e.firstRun}`), { type: 'slow.done', value: `b-${e.id}` }) },
    })
    await rb.start()
    // Node B polls meanwhile but takes the effect only once A's lease has run out.
    const leaseEnd = (await db().pool.query('select lease_until from effect where actor_id = $1', [id])).rows[0].lease_until as Date
    await waitFor(async () => (await status(id)) === 'done')
    // A ran it as the commit that planned it wrote it; B knows it takes over a run that may have begun.
    expect(entries).toEqual(['a first run: true', 'b first run: false'])
    const { rows } = await db().pool.query(
      `select e.claimed_by, e.status, e.updated_at >= $2 as after_lease, x.snapshot->'context'->>'result' as result
         from effect e join actor x on x.id = e.actor_id where e.actor_id = $1`,
      [id, leaseEnd],
    )
    expect(rows).toEqual([{ claimed_by: 'node-b', status: 'done', after_lease: true, result: `b-${id}:2:0` }])
    // Were A's handler to return now, its finish is refused: the lease is no longer A's.
    const [effect] = await claimEffects(db().pool, { owner: 'probe', leaseMs: 1000, actorId: id })
    expect(effect).toBeUndefined()
    const late = { id: `${id}:2:0`, actorId: id, accountId: randomUUID(), kind: 'slow.work', params: {}, status: 'pending' as const, externalRef: null, result: null, attempts: 0 }
    expect(await finishEffect(db().pool, late, { owner: 'node-a', status: 'done', event: { type: 'slow.done', value: 'a' } })).toBe(false)
    expect((await db().pool.query(`select count(*)::int as n from actor_journal where actor_id = $1 and event->>'type' = 'slow.done'`, [id])).rows[0].n).toBe(1)
    expect((await db().pool.query(`select count(*)::int as n from actor_inbox where actor_id = $1 and event->>'type' = 'slow.done'`, [id])).rows[0].n).toBe(0)
    await rb.stop()
  })

  it('an effect its retired node held is claimed again as a run that may have begun, never as a first run', async () => {
    const hang = new Promise<never>(() => {})
    const runs: Array<boolean | undefined> = []
    const ra = createActorRuntime({
      pool: db().pool, kinds: [slowKind], logger, nodeId: 'node-r', pollMs: 60_000,
      effectHandlers: { 'slow.work': async (e) => (runs.push(e.firstRun), hang) },
    })
    await ra.start()
    const id = randomUUID()
    await ra.create('slow', { id, accountId: randomUUID(), input: {} })
    await ra.send(id, { type: 'slow.run' })
    await waitFor(() => runs.length === 1)
    expect(runs).toEqual([true])
    // Its node retired (a clean stop, or its process seen gone): the effect is free at once.
    expect(await retireNode(db().pool, 'node-r')).toBe(1)
    // The retired node can no longer keep it.
    expect(await renewLease(db().pool, `${id}:2:0`, { owner: 'node-r', leaseMs: 1000 })).toBe(false)
    const [taken] = await claimEffects(db().pool, { owner: 'probe', leaseMs: 1000, actorId: id })
    expect(taken).toMatchObject({ id: `${id}:2:0`, firstRun: false })
    void ra.stop()
  })

  it('a node restarted on the same host takes over its crashed predecessor\'s shards and effect at once', async () => {
    const entries: string[] = []
    // The predecessor: its database traffic stops (as a killed process's does) once it holds the effect.
    let shut = false
    let never: Promise<void> = new Promise(() => {})
    const frozen = new Proxy(db().pool, {
      get(target, prop, receiver) {
        if (prop !== 'query' && prop !== 'connect') return Reflect.get(target, prop, receiver)
        return async (...args: unknown[]) => {
          if (shut) await never
          return (Reflect.get(target, prop, receiver) as (...a: unknown[]) => unknown).apply(target, args)
        }
      },
    })
    const ra = createActorRuntime({ pool: frozen, kinds: [slowKind], logger, nodeId: 'crashed', effectLeaseMs: 3_600_000, pollMs: 60_000,
      effectHandlers: { 'slow.work': () => (entries.push('crashed'), new Promise<never>(() => {})) } })
    await ra.start()
    const id = randomUUID()
    await ra.create('slow', { id, accountId: randomUUID(), input: {} })
    await ra.send(id, { type: 'slow.run' })
    await waitFor(async () => (await db().pool.query('select claimed_by from effect where actor_id = $1', [id])).rows[0]?.claimed_by === 'crashed')
    shut = true
    // Its process is gone: its row names a pid that no longer exists on this host.
    const deadPid = spawnSync(process.execPath, ['-e', '0']).pid
    await db().pool.query('update service_node set pid = $2 where id = $1', ['crashed', deadPid])
    const lease = async () =>
      (await db().pool.query(`select claimed_by, lease_until > now() + interval '50 minutes' as held_for_long from effect where actor_id = $1`, [id])).rows[0]
    // The predecessor's effect lease holds for most of an hour, its shard leases for seconds more.
    expect(await lease()).toEqual({ claimed_by: 'crashed', held_for_long: true })
    const leaseEnd = (await db().pool.query('select lease_until from effect where actor_id = $1', [id])).rows[0].lease_until as Date
    const rb = createActorRuntime({ pool: db().pool, kinds: [slowKind], logger, nodeId: 'successor', pollMs: 60_000,
      effectHandlers: { 'slow.work': async () => (entries.push('successor'), { type: 'slow.done', value: 'resumed' }) } })
    await rb.start()
    // At once: start() retired the dead node, took every shard, and its first poll claimed the effect.
    expect((await lease()).claimed_by).toBe('successor')
    expect(rb.node().shards).toHaveLength(64)
    await waitFor(async () => (await status(id)) === 'done')
    expect(entries).toEqual(['crashed', 'successor'])
    const { rows } = await db().pool.query(
      `select e.status, e.updated_at < $2 as before_lease_end, x.snapshot->'context'->>'result' as result
         from effect e join actor x on x.id = e.actor_id where e.actor_id = $1`,
      [id, leaseEnd],
    )
    expect(rows).toEqual([{ status: 'done', before_lease_end: true, result: 'resumed' }])
    expect((await db().pool.query(`select stopped_at is not null as retired from service_node where id = 'crashed'`)).rows[0]).toEqual({ retired: true })
    await rb.stop()
    never = Promise.resolve()
    void ra.stop() // its handler never returns: not awaited (stop would wait its 5 s grace)
  })
})

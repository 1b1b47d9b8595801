import { randomUUID } from 'node:crypto'
import type pg from 'pg'
import { describe, expect, it } from 'vitest'
import { assign, setup, type AnyEventObject } from 'xstate'
import { createLogger } from '../src/logger.ts'
import { createActorRuntime } from '../src/actors/runtime/actorRuntime.ts'
import type { ActorKind, EffectHandler } from '../src/actors/runtime/actorKind.ts'
import { actorsWithPendingInbox, enqueue } from '../src/actors/runtime/actorStore.ts'
import { SHARD_COUNT, shardOf } from '../src/actors/runtime/shards.ts'
import { listNodes } from '../src/actors/runtime/shardLease.store.ts'
import { useMigratedDatabase } from './support/db.ts'
import { waitFor } from './support/waitFor.ts'

/** One effect per job; the handler says which node ran it. */
const jobMachine = setup({
  types: {
    context: {} as { result: string | null },
    events: {} as { type: 'job.run' } | { type: 'job.done'; value: string; effectId: string } | { type: 'job.work.failed'; error: string },
    input: {} as Record<string, never>,
  },
  actions: { 'job.work': () => {} },
}).createMachine({
  id: 'job',
  initial: 'idle',
  context: { result: null },
  states: {
    idle: { on: { 'job.run': 'working' } },
    working: {
      entry: { type: 'job.work' },
      on: { 'job.done': { target: 'done', actions: assign({ result: ({ event }) => event.value }) }, 'job.work.failed': 'failed' },
    },
    done: { type: 'final' },
    failed: { type: 'final' },
  },
})
const jobKind: ActorKind = {
  kind: 'job', machine: jobMachine, machineVersion: 1, parseEvent: (e) => e as AnyEventObject, statusOf: (s) => String(s.value), effects: ['job.work'],
}

const logger = createLogger({ level: 'silent' })
const db = useMigratedDatabase()
const TTL = 600

function node(nodeId: string, work: EffectHandler, pool: pg.Pool = db().pool) {
  return createActorRuntime({ pool, kinds: [jobKind], logger, nodeId, pollMs: 30, shardLeaseMs: TTL, effectHandlers: { 'job.work': work } })
}
const byNode = (name: string): EffectHandler => async () => ({ type: 'job.done', value: name })

/** A pool whose statements wait while the gate is shut: a node cut off from the database (or frozen). */
function gatedPool(pool: pg.Pool) {
  let open: Promise<void> = Promise.resolve()
  let openGate = () => {}
  const gated = new Proxy(pool, {
    get(target, prop, receiver) {
      if (prop !== 'query' && prop !== 'connect') return Reflect.get(target, prop, receiver)
      return async (...args: unknown[]) => {
        await open
        return (Reflect.get(target, prop, receiver) as (...a: unknown[]) => unknown).apply(target, args)
      }
    },
  })
  return {
    pool: gated,
    shut: () => void (open = new Promise((r) => (openGate = r))),
    open: () => openGate(),
  }
}

const owners = async () => new Map((await db().pool.query<{ shard: number; owner: string | null }>(
  'select shard, owner from shard_lease where expires_at > now()')).rows.map((r) => [r.shard, r.owner]))
const actor = async (id: string) => (await db().pool.query('select status, snapshot, shard from actor where id = $1', [id])).rows[0]

describe('shards', () => {
  it('an actor\'s shard is the same in TypeScript and in the database', async () => {
    const ids = [...Array.from({ length: 2000 }, () => randomUUID()), 'agent_1', 'ä-ß-日本', '', `${randomUUID()}:op:1.0`]
    const { rows } = await db().pool.query<{ id: string; shard: number }>('select id, actor_shard(id) as shard from unnest($1::text[]) as id', [ids])
    expect(rows.map((r) => r.shard)).toEqual(ids.map(shardOf))
    expect(new Set(ids.map(shardOf)).size).toBe(SHARD_COUNT)
  })

  it('two nodes split the shards; each polls only its own', async () => {
    const a = node('split-a', byNode('split-a'))
    const b = node('split-b', byNode('split-b'))
    await a.start()
    await b.start()
    await waitFor(async () => {
      const held = [...(await owners()).values()]
      return held.filter((o) => o === 'split-a').length === 32 && held.filter((o) => o === 'split-b').length === 32
    })
    const listed = (await listNodes(db().pool)).filter((n) => n.id.startsWith('split-'))
    expect(listed.map((n) => [n.id, n.shards.length])).toEqual([['split-a', 32], ['split-b', 32]])
    expect(new Set([...listed[0]!.shards, ...listed[1]!.shards]).size).toBe(SHARD_COUNT)

    // Events written to the inbox by no node: the owner of each actor's shard picks them up.
    const accountId = randomUUID()
    const ids = Array.from({ length: 24 }, () => randomUUID())
    for (const id of ids) await a.create('job', { id, accountId, input: {} })
    for (const id of ids) await enqueue(db().pool, { actorId: id, accountId, event: { type: 'job.run' }, dedupeKey: null })
    await waitFor(async () => (await Promise.all(ids.map(actor))).every((r) => r.status === 'done'))
    const held = await owners()
    for (const id of ids) {
      const r = await actor(id)
      expect({ id, ranOn: r.snapshot.context.result }).toEqual({ id, ranOn: held.get(r.shard) })
    }
    await a.stop()
    // A clean stop hands the shards back: the other node holds all of them within a renewal.
    await waitFor(async () => [...(await owners()).values()].filter((o) => o === 'split-b').length === SHARD_COUNT)
    expect((await listNodes(db().pool)).find((n) => n.id === 'split-a')).toMatchObject({ shards: [], stoppedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) })
    await b.stop()
  })

  it('a poll is fenced on the database clock: a lease that ran out takes nothing, though the node still names its shard', async () => {
    const id = randomUUID()
    await node('fence-creator', byNode('fence-creator')).create('job', { id, accountId: randomUUID(), input: {} })
    await enqueue(db().pool, { actorId: id, accountId: randomUUID(), event: { type: 'job.run' }, dedupeKey: null })
    const shard = shardOf(id)
    const lease = (expiresInMs: number) => db().pool.query(
      `update shard_lease set owner = 'fence-n', expires_at = now() + $2 * interval '1 millisecond' where shard = $1`, [shard, expiresInMs])
    await lease(-1000)
    expect(await actorsWithPendingInbox(db().pool, { shards: [shard], node: 'fence-n' })).toEqual([])
    await lease(10_000)
    expect(await actorsWithPendingInbox(db().pool, { shards: [shard], node: 'fence-n' })).toEqual([id])
    // "All shards" is a claim the database checks too: this node holds one of 64.
    expect(await actorsWithPendingInbox(db().pool, { shards: null, node: 'fence-n' })).toEqual([])
    await db().pool.query(`update shard_lease set owner = null, expires_at = now() where shard = $1`, [shard])
  })

  it('a node cut off past its lease loses its shards and its effect; when it comes back it finishes nothing', async () => {
    const cut = gatedPool(db().pool)
    let releaseA!: () => void
    const aBlocked = new Promise<void>((r) => (releaseA = r))
    let aEntered = false
    const a = node('cut-a', async () => {
      aEntered = true
      await aBlocked
      return { type: 'job.done', value: 'cut-a' }
    }, cut.pool)
    await a.start()
    const id = randomUUID()
    await a.create('job', { id, accountId: randomUUID(), input: {} })
    await a.send(id, { type: 'job.run' })
    await waitFor(() => aEntered)

    const b = node('cut-b', byNode('cut-b'))
    await b.start()
    cut.shut()
    // Node A can neither renew nor reach anything: B retires it, takes every shard and runs the effect.
    await waitFor(async () => (await actor(id)).status === 'done', 10_000)
    expect((await actor(id)).snapshot.context.result).toBe('cut-b')
    expect([...(await owners()).values()].every((o) => o === 'cut-b')).toBe(true)

    // A comes back and its handler returns: its finish is refused, nothing of it is committed.
    cut.open()
    releaseA()
    await a.stop()
    const { rows } = await db().pool.query(
      `select (select count(*)::int from actor_journal where actor_id = $1 and event->>'type' = 'job.done') as done_events,
              (select claimed_by from effect where actor_id = $1) as claimed_by,
              (select result->>'value' from effect where actor_id = $1) as result`,
      [id],
    )
    expect(rows[0]).toEqual({ done_events: 1, claimed_by: 'cut-b', result: 'cut-b' })
    expect((await actor(id)).snapshot.context.result).toBe('cut-b')
    await b.stop()
  })
})

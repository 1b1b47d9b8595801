import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { assign, setup, type AnyEventObject } from 'xstate'
import { createLogger } from '../src/logger.ts'
import { buildTimeline } from '../src/http/opsTimeline.ts'
import { journalEvents } from '../src/actors/runtime/actorJournal.store.ts'
import type { ActorKind, EffectHandler } from '../src/actors/runtime/actorKind.ts'
import { createActorRuntime } from '../src/actors/runtime/actorRuntime.ts'
import { MIGRATED_EVENT, replayJournal } from '../src/actors/runtime/replay.ts'
import { useMigratedDatabase } from './support/db.ts'
import { waitFor } from './support/waitFor.ts'

/**
 * Replay across a machine version bump: an actor written by version 1 of its machine, migrated
 * when a runtime of version 2 loads it, then driven further by version 2, replays from its
 * journal to the snapshot the runtime stored. The loader journals the migration as a step of its
 * own (`actor.migrated`, with the snapshot version 1 stored), and replay applies the kind's
 * `migrate` there, as the loader did.
 */
const logger = createLogger({ level: 'silent' })
const db = useMigratedDatabase({ poolSize: 4 })

type TicketEvent = { type: 'ticket.add'; n: number } | { type: 'ticket.close' }

/** Version 1: an `open` ticket counts what is added (`count`), telling someone of each addition. */
const ticketV1 = setup({
  types: { context: {} as { owner: string; count: number }, events: {} as TicketEvent, input: {} as { owner: string } },
  actions: { 'ticket.notify': (_, _p: { total: number }) => {} },
}).createMachine({
  id: 'ticket',
  initial: 'open',
  context: ({ input }) => ({ owner: input.owner, count: 0 }),
  states: {
    open: {
      on: {
        'ticket.add': { actions: [assign({ count: ({ context, event }) => context.count + event.n }), { type: 'ticket.notify', params: ({ context }) => ({ total: context.count }) }] },
        'ticket.close': 'closed',
      },
    },
    closed: { type: 'final' },
  },
})

/**
 * Version 2: the state `open` is now `active` and `count` is `total`, a change version 1's
 * snapshots would be misread by (hence the bump), and an active ticket takes notes.
 */
const ticketV2 = setup({
  types: {
    context: {} as { owner: string; total: number; notes: string[] },
    events: {} as TicketEvent | { type: 'ticket.note'; text: string },
    input: {} as { owner: string },
  },
  actions: { 'ticket.notify': (_, _p: { total: number }) => {} },
}).createMachine({
  id: 'ticket',
  initial: 'active',
  context: ({ input }) => ({ owner: input.owner, total: 0, notes: [] }),
  states: {
    active: {
      on: {
        'ticket.add': { actions: [assign({ total: ({ context, event }) => context.total + event.n }), { type: 'ticket.notify', params: ({ context }) => ({ total: context.total }) }] },
        'ticket.note': { actions: assign({ notes: ({ context, event }) => [...context.notes, event.text] }) },
        'ticket.close': 'closed',
      },
    },
    closed: { type: 'final' },
  },
})

const base = { kind: 'ticket', parseEvent: (e: unknown) => e as AnyEventObject, statusOf: (s: { value: unknown }) => String(s.value), effects: ['ticket.notify'] }
const kindV1: ActorKind = { ...base, machine: ticketV1, machineVersion: 1 }
const kindV2: ActorKind = {
  ...base,
  machine: ticketV2,
  machineVersion: 2,
  migrate(persisted, fromVersion) {
    if (fromVersion !== 1) throw new Error(`no migration from ticket machine version ${fromVersion}`)
    const p = persisted as { value: string; context: { owner: string; count: number } }
    return { ...p, value: p.value === 'open' ? 'active' : p.value, context: { owner: p.context.owner, total: p.context.count, notes: [] } }
  },
}

const quiet: Record<string, EffectHandler> = { 'ticket.notify': async () => null }

/** A runtime of one machine version, as a deploy of that build would start it. */
async function runtimeOf(kind: ActorKind) {
  const runtime = createActorRuntime({ pool: db().pool, kinds: [kind], logger, effectHandlers: quiet, pollMs: 50 })
  await runtime.start()
  return runtime
}

const effectsDone = async (id: string) =>
  (await db().pool.query(`select count(*)::int as n from effect where actor_id = $1 and status <> 'done'`, [id])).rows[0].n === 0

describe('replay across a machine version bump', () => {
  it('a journal written by version 1, migrated on load and continued by version 2 replays to the stored snapshot', async () => {
    const id = randomUUID()
    const old = await runtimeOf(kindV1)
    await old.create('ticket', { id, accountId: randomUUID(), input: { owner: 'ops' } })
    await old.send(id, { type: 'ticket.add', n: 2 })
    await old.send(id, { type: 'ticket.add', n: 3 })
    await waitFor(() => effectsDone(id))
    await old.stop()

    // The new build loads the actor (the loader migrates it and journals that) and takes more events.
    const next = await runtimeOf(kindV2)
    expect((await next.send(id, { type: 'ticket.add', n: 4 })).snapshot.context).toEqual({ owner: 'ops', total: 9, notes: [] })
    await next.send(id, { type: 'ticket.note', text: 'migrated' })
    expect((await next.send(id, { type: 'ticket.close' })).status).toBe('closed')
    await waitFor(() => effectsDone(id))

    const { rows: [row] } = await db().pool.query('select version::int as version, machine_version, status, state_value, snapshot from actor where id = $1', [id])
    const journal = await journalEvents(db().pool, id)
    expect(journal.map((j) => `${j.seq} ${j.event.type}`)).toEqual(['1 xstate.init', '2 ticket.add', '3 ticket.add', `4 ${MIGRATED_EVENT}`, '5 ticket.add', '6 ticket.note', '7 ticket.close'])
    expect(row).toMatchObject({ version: 7, machine_version: 2, status: 'closed' })
    expect(journal[3]!.event).toEqual({ type: MIGRATED_EVENT, from: 1, to: 2, snapshot: expect.objectContaining({ value: 'open', context: { owner: 'ops', count: 5 } }) })
    const { rows: stored } = await db().pool.query<{ id: string; kind: string; params: unknown }>('select id, kind, params from effect where actor_id = $1 order by id', [id])
    expect(stored.map((e) => e.params)).toEqual([{ total: 2 }, { total: 5 }, { total: 9 }])
    const events = journal.map((j) => j.event)
    const asStored = (effects: unknown) => JSON.parse(JSON.stringify(effects)).sort((a: { id: string }, b: { id: string }) => a.id.localeCompare(b.id))

    // Given version 1's machine, the whole history folds: version 1's entries give the snapshot the migration recorded.
    const whole = replayJournal(kindV2, events, id, { 1: kindV1 })
    expect(whole.persisted).toEqual(row.snapshot)
    expect(whole.status).toBe(row.status)
    expect(whole.snapshot.value).toEqual(row.state_value)
    expect(whole.foldedFrom).toBe(1)
    expect(asStored(whole.effects)).toEqual(stored)

    // This build alone (version 1's machine gone): the fold starts at the migration, from the snapshot it recorded.
    const fromMigration = replayJournal(kindV2, events, id)
    expect(fromMigration.persisted).toEqual(row.snapshot)
    expect(fromMigration.foldedFrom).toBe(4)
    expect(asStored(fromMigration.effects)).toEqual(stored.filter((e) => e.id.startsWith(`${id}:5:`)))

    // A recorded snapshot that version 1's entries do not fold to is reported, not replayed over.
    const tampered = events.map((e) => (e.type === MIGRATED_EVENT ? { ...e, snapshot: { ...(e.snapshot as object), context: { owner: 'ops', count: 6 } } } : e))
    expect(() => replayJournal(kindV2, tampered, id, { 1: kindV1 })).toThrow(/before seq 4 folds to another snapshot/)

    // The operator console shows the migration as a step of the actor's history, with the state it left.
    const page = await next.inspect.timeline(id, { limit: 100 })
    expect(page.journal.find((j) => j.seq === 4)).toMatchObject({ event: { type: MIGRATED_EVENT, from: 1, to: 2 }, stateValue: 'active' })
    expect(buildTimeline(page, () => 8).filter((e) => e.type === 'event').map((e) => e.type === 'event' && `${e.event} → ${String(e.state)}`))
      .toEqual(['xstate.init → open', 'ticket.add → open', 'ticket.add → open', `${MIGRATED_EVENT} → active`, 'ticket.add → active', 'ticket.note → active', 'ticket.close → closed'])
    await next.stop()
  })

  it('two runtimes loading an old actor at once journal its migration once; a stale entry loses its version race and reloads', async () => {
    const id = randomUUID()
    const old = await runtimeOf(kindV1)
    await old.create('ticket', { id, accountId: randomUUID(), input: { owner: 'ops' } })
    await old.stop()
    const [a, b] = [createActorRuntime({ pool: db().pool, kinds: [kindV2], logger }), createActorRuntime({ pool: db().pool, kinds: [kindV2], logger })]
    const [ea, eb] = await Promise.all([a.get(id), b.get(id)])
    // Both may have read version 1 and migrated it: one committed the migration, the other keeps the version it read.
    expect([ea?.version, eb?.version]).toContain(2)
    expect((await journalEvents(db().pool, id)).map((j) => j.event.type)).toEqual(['xstate.init', MIGRATED_EVENT])
    expect((await b.send(id, { type: 'ticket.add', n: 1 })).version).toBe(3)
    expect(replayJournal(kindV2, (await journalEvents(db().pool, id)).map((j) => j.event), id, { 1: kindV1 }).persisted)
      .toEqual((await db().pool.query('select snapshot from actor where id = $1', [id])).rows[0].snapshot)
  })
})

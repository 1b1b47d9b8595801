import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { assign, setup, type AnyEventObject } from 'xstate'
import { createLogger } from '../src/logger.ts'
import { createActorRuntime } from '../src/actors/runtime/actorRuntime.ts'
import type { ActorKind, EffectHandler } from '../src/actors/runtime/actorKind.ts'
import { useMigratedDatabase } from './support/db.ts'

/** `ord.work` runs while the actor is `working`; `note` is taken there too, and the outcome ends it. */
const orderMachine = setup({
  types: {
    context: {} as { log: string[] },
    events: {} as { type: 'go' } | { type: 'note' } | { type: 'ord.done'; effectId: string } | { type: 'ord.work.failed'; effectId: string },
  },
  actions: { 'ord.work': () => {} },
}).createMachine({
  id: 'ord',
  initial: 'idle',
  context: { log: [] },
  states: {
    idle: { on: { go: 'working' } },
    working: {
      entry: 'ord.work',
      on: {
        note: { actions: assign({ log: ({ context }) => [...context.log, 'note'] }) },
        'ord.done': { target: 'finished', actions: assign({ log: ({ context }) => [...context.log, 'done'] }) },
      },
    },
    finished: { type: 'final' },
  },
})
const orderKind: ActorKind = {
  kind: 'ord',
  machine: orderMachine,
  machineVersion: 1,
  parseEvent: (e) => e as AnyEventObject,
  statusOf: (s) => String(s.value),
  effects: ['ord.work'],
}

const logger = createLogger({ level: 'silent' })
const db = useMigratedDatabase()

describe("an effect's outcome applied in its finish", () => {
  it('waits behind an event already in the inbox: both are applied, in the inbox order', async () => {
    const pool = db().pool
    let release!: () => void
    const released = new Promise<void>((r) => (release = r))
    let entered!: () => void
    const running = new Promise<void>((r) => (entered = r))
    const handler: EffectHandler = async () => {
      entered()
      await released
      return { type: 'ord.done' }
    }
    const runtime = createActorRuntime({ pool, kinds: [orderKind], logger, effectHandlers: { 'ord.work': handler }, pollMs: 60_000 })
    await runtime.start()
    try {
      const id = randomUUID()
      const accountId = randomUUID()
      await runtime.create('ord', { id, accountId, input: {} })
      await runtime.send(id, { type: 'go' })
      await running
      // Another node's event, in the inbox and not applied yet, when the effect finishes.
      await pool.query(`insert into actor_inbox (actor_id, account_id, event) values ($1, $2, '{"type":"note"}')`, [id, accountId])
      release()
      const entry = await runtime.waitFor(id, (e) => e.status === 'finished', 10_000)
      expect(entry?.status).toBe('finished')
      expect(entry?.snapshot.context).toEqual({ log: ['note', 'done'] })
      const journal = await pool.query<{ type: string }>(`select event->>'type' as type from actor_journal where actor_id = $1 order by seq`, [id])
      expect(journal.rows.map((r) => r.type)).toEqual(['xstate.init', 'go', 'note', 'ord.done'])
      const pending = await pool.query(`select count(*)::int as n from actor_inbox where actor_id = $1 and processed_at is null`, [id])
      expect(pending.rows[0].n).toBe(0)
      const effect = await pool.query(`select status from effect where actor_id = $1`, [id])
      expect(effect.rows).toEqual([{ status: 'done' }])
    } finally {
      await runtime.stop()
    }
  })
})

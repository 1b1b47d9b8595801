import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { assign, setup, type AnyEventObject } from 'xstate'
import { createLogger } from '../src/logger.ts'
import { createActorRuntime } from '../src/actors/runtime/actorRuntime.ts'
import type { ActorKind, EffectHandler, EffectRow, FinishWrite } from '../src/actors/runtime/actorKind.ts'
import { useMigratedDatabase } from './support/db.ts'

/** One effect (`paid.work`) that reports `paid.done`; its handler writes a row with the outcome. */
const paidMachine = setup({
  types: {
    context: {} as { result: string | null },
    events: {} as { type: 'paid.run' } | { type: 'paid.done'; value: string; effectId: string } | { type: 'paid.work.failed'; effectId: string },
  },
  actions: { 'paid.work': () => {} },
}).createMachine({
  id: 'paid',
  initial: 'idle',
  context: { result: null },
  states: {
    idle: { on: { 'paid.run': 'working' } },
    working: {
      entry: 'paid.work',
      on: { 'paid.done': { target: 'done', actions: assign({ result: ({ event }) => event.value }) }, 'paid.work.failed': 'failed' },
    },
    done: { type: 'final' },
    failed: { type: 'final' },
  },
})
const paidKind: ActorKind = {
  kind: 'paid',
  machine: paidMachine,
  machineVersion: 1,
  parseEvent: (e) => e as AnyEventObject,
  statusOf: (s) => String(s.value),
  effects: ['paid.work'],
}

const logger = createLogger({ level: 'silent' })
const db = useMigratedDatabase()

/** Runs one `paid` actor through `paid.run` with `handler`; answers its id and the entry it ended with. */
async function runPaid(handler: EffectHandler, maxEffectAttempts: number) {
  const runtime = createActorRuntime({ pool: db().pool, kinds: [paidKind], logger, effectHandlers: { 'paid.work': handler }, pollMs: 20, maxEffectAttempts })
  await runtime.start()
  try {
    const id = randomUUID()
    await runtime.create('paid', { id, accountId: randomUUID(), input: {} })
    await runtime.send(id, { type: 'paid.run' })
    return { id, entry: await runtime.waitFor(id, (e) => e.status !== 'working', 10_000) }
  } finally {
    await runtime.stop()
  }
}

describe('effect results that carry writes (finishWith)', () => {
  it("an effect given up on commits its handler's giveUp write with the final failure, once", async () => {
    const pool = db().pool
    await pool.query('create table if not exists give_up_probe (ref text primary key)')
    let attempts = 0
    const handler: EffectHandler = Object.assign(
      async () => {
        attempts++
        throw new Error('always fails')
      },
      {
        giveUp: (effect: EffectRow): FinishWrite => async (tx) => {
          await tx.query('insert into give_up_probe (ref) values ($1)', [effect.id])
        },
      },
    )
    const { id, entry } = await runPaid(handler, 2)
    expect(entry?.status).toBe('failed')
    expect(attempts).toBe(2)
    const { rows } = await pool.query('select ref from give_up_probe where ref like $1', [`${id}:%`])
    expect(rows).toEqual([{ ref: `${id}:2:0` }])
  })

  it('commits the write with the outcome event once; a failing write rolls both back and the effect is retried', async () => {
    const pool = db().pool
    await pool.query('create table if not exists finish_probe (ref text primary key, attempt int not null)')
    let attempts = 0
    const handler: EffectHandler = async (effect, ctx) => {
      const attempt = ++attempts
      ctx.finishWith(async (tx) => {
        await tx.query('insert into finish_probe (ref, attempt) values ($1, $2)', [effect.id, attempt])
        // The first attempt's write fails after the effect row and the transition were written.
        if (attempt === 1) throw new Error('write failed')
      })
      return { type: 'paid.done', value: `attempt-${attempt}` }
    }
    const { id, entry } = await runPaid(handler, 5)
    expect(entry?.status).toBe('done')
    expect(entry?.snapshot.context).toEqual({ result: 'attempt-2' })
    const { rows } = await pool.query('select ref, attempt from finish_probe')
    expect(rows).toEqual([{ ref: expect.stringMatching(new RegExp(`^${id}:`)), attempt: 2 }])
    // The outcome was applied once (in the finish's own transaction: no inbox row was needed).
    const applied = await pool.query(`select count(*)::int as n from actor_journal where actor_id = $1 and event->>'type' = 'paid.done'`, [id])
    expect(applied.rows[0].n).toBe(1)
    const pending = await pool.query(`select count(*)::int as n from actor_inbox where actor_id = $1 and processed_at is null`, [id])
    expect(pending.rows[0].n).toBe(0)
  })

  it('a write described as SQL goes out in the statement that applies the outcome; a refused transition writes none of it, and the transaction writes it once', async () => {
    const pool = db().pool
    await pool.query('create table if not exists sql_probe (ref text primary key, attempt int not null)')
    let attempts = 0
    const probe = (ref: string, attempt: number) => ({ name: 'sql.probe', with: [{ as: 'sql_probe_w', sql: 'insert into sql_probe (ref, attempt) values ($1, $2)' }], values: [ref, attempt] })
    const straight: EffectHandler = async (effect, ctx) => {
      ctx.finishWith(probe(effect.id, ++attempts))
      return { type: 'paid.done', value: 'straight' }
    }
    const first = await runPaid(straight, 5)
    expect(first.entry?.snapshot.context).toEqual({ result: 'straight' })
    expect((await pool.query('select attempt from sql_probe where ref like $1', [`${first.id}:%`])).rows).toEqual([{ attempt: 1 }])
    // Applied in the finish's own statement: no inbox row was needed.
    const inboxOf = (id: string) => pool.query(`select event->>'type' as type from actor_inbox where actor_id = $1 order by seq`, [id]).then((r) => r.rows.map((x) => x.type))
    expect(await inboxOf(first.id)).toEqual([])

    // An event waits in the actor's inbox when the outcome comes: the fence refuses the one
    // statement (so its write is not made), the finish takes the transaction, and the outcome
    // follows the waiting event through the inbox.
    const fenced: EffectHandler = async (effect, ctx) => {
      await pool.query(`insert into actor_inbox (actor_id, account_id, event) values ($1, $2, '{"type":"paid.noise"}')`, [effect.actorId, effect.accountId])
      ctx.finishWith(probe(effect.id, ++attempts))
      return { type: 'paid.done', value: 'fenced' }
    }
    const second = await runPaid(fenced, 5)
    expect(second.entry?.snapshot.context).toEqual({ result: 'fenced' })
    expect((await pool.query('select attempt from sql_probe where ref like $1', [`${second.id}:%`])).rows).toEqual([{ attempt: 2 }])
    expect(await inboxOf(second.id)).toEqual(['paid.noise', 'paid.done'])
    const applied = await pool.query(`select count(*)::int as n from actor_journal where actor_id = $1 and event->>'type' = 'paid.done'`, [second.id])
    expect(applied.rows[0].n).toBe(1)
  })
})

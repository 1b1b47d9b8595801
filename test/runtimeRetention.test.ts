import { spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { assign, setup, type AnyEventObject } from 'xstate'
import { ActorEventRefusedError } from '../src/actors/runtime/actorErrors.ts'
import { createActorRuntime, type ActorRuntimeOptions } from '../src/actors/runtime/actorRuntime.ts'
import type { ActorKind, EffectHandler } from '../src/actors/runtime/actorKind.ts'
import { createLogger } from '../src/logger.ts'
import { replayStored } from '../src/actors/runtime/replayStored.ts'
import { compactEnded } from '../src/actors/runtime/compaction.store.ts'
import { useMigratedDatabase } from './support/db.ts'
import { waitFor } from './support/waitFor.ts'

/**
 * Retention in the runtime: an ended actor keeps its journal, effects, inbox rows and timers for
 * its kind's window, then one sweep's statement deletes them and stamps the row, which stays.
 * The sweeps here are called by the test (the periodic one is an hour away), so each step is
 * deterministic; the windows are a millisecond (`quiet`) and an hour (`default`).
 */
const jobMachine = setup({
  types: {
    context: {} as { result: string | null },
    events: {} as { type: 'job.run' } | { type: 'job.done'; value: string; effectId: string },
    input: {} as Record<string, never>,
  },
  actions: { 'job.work': () => {}, 'job.notify': () => {} },
}).createMachine({
  id: 'job',
  initial: 'idle',
  context: { result: null },
  states: {
    idle: { on: { 'job.run': 'working' } },
    working: {
      entry: { type: 'job.work' },
      on: { 'job.done': { target: 'done', actions: assign({ result: ({ event }) => event.value }) } },
    },
    // An effect asked for by the final transition itself: it may still run after the actor ended.
    done: { type: 'final', entry: { type: 'job.notify' } },
  },
})

const jobKind: ActorKind = {
  kind: 'retjob',
  machine: jobMachine,
  machineVersion: 1,
  parseEvent: (e) => e as AnyEventObject,
  statusOf: (s) => String(s.value),
  effects: ['job.work', 'job.notify'],
  retention: (s) => ((s.context as { result: string }).result.startsWith('quiet') ? 'quiet' : 'default'),
}

const logger = createLogger({ level: 'silent' })
const db = useMigratedDatabase()
const q = async (sql: string, params: unknown[] = []) => (await db().pool.query(sql, params)).rows

/** The work effect answers its own id (retention class `default`); the notify effect does nothing. */
const handlers: Record<string, EffectHandler> = {
  'job.work': async (effect) => ({ type: 'job.done', value: effect.id, effectId: effect.id }),
  'job.notify': async () => null,
}

function runtime(extra: Partial<ActorRuntimeOptions> = {}) {
  return createActorRuntime({
    pool: db().pool, kinds: [jobKind], logger, pollMs: 50, effectHandlers: handlers,
    retention: { windowsMs: { default: 3_600_000, quiet: 1 }, inboxMs: 3_600_000, sweepMs: 3_600_000 },
    ...extra,
  })
}

/** An actor run to its end by the effect handlers (a started runtime): class `default`. */
async function ended(rt: ReturnType<typeof runtime>): Promise<string> {
  const id = randomUUID()
  await rt.create('retjob', { id, accountId: randomUUID(), input: {} })
  await rt.send(id, { type: 'job.run' })
  await rt.waitFor(id, (e) => e.status === 'done', 10_000)
  return id
}

const history = async (id: string) => ({
  journal: Number((await q('select count(*) from actor_journal where actor_id = $1', [id]))[0].count),
  effects: Number((await q('select count(*) from effect where actor_id = $1', [id]))[0].count),
  inbox: Number((await q('select count(*) from actor_inbox where actor_id = $1', [id]))[0].count),
  timers: Number((await q('select count(*) from actor_timer where actor_id = $1', [id]))[0].count),
})
const compactedAt = async (id: string) => ((await q('select compacted_at from actor where id = $1', [id]))[0]?.compacted_at ?? null) as string | null

describe('retention in the runtime', () => {
  it('keeps an ended actor whole within its window, then deletes its history in one sweep and keeps its row', async () => {
    const rt = runtime()
    await rt.start()
    try {
      const quiet = await ended(rt)
      const loud = await ended(rt)
      // The window is set by the commit that ended the actor, from its kind's class (here `default`).
      const windowOf = async (id: string) => (await q(`select extract(epoch from compact_after - updated_at) * 1000 as ms from actor where id = $1`, [id]))[0].ms
      expect(Number(await windowOf(loud))).toBeGreaterThan(3_000_000)
      const before = await history(loud)
      expect(before.journal).toBeGreaterThanOrEqual(3)
      expect(before.effects).toBe(2)
      const snapshot = (await q('select snapshot, status, version from actor where id = $1', [loud]))[0]
      // Within its window it replays from its journal to the stored snapshot.
      const replayed = await replayStored(db().pool, jobKind, loud)
      expect(replayed.compacted === false && replayed.persisted).toEqual(snapshot.snapshot)

      await rt.retention.sweep()
      // The hour-long window has not passed: nothing of it is gone.
      expect(await history(loud)).toEqual(before)
      expect(await compactedAt(loud)).toBeNull()

      // Past its window (moved back by the test), it is compacted: history gone, row as it was.
      await q(`update actor set compact_after = now() - interval '1 second' where id = $1`, [loud])
      expect((await rt.retention.sweep()).compacted).toBeGreaterThanOrEqual(1)
      expect(await history(loud)).toEqual({ journal: 0, effects: 0, inbox: 0, timers: 0 })
      expect(await compactedAt(loud)).not.toBeNull()
      expect((await q('select snapshot, status, version from actor where id = $1', [loud]))[0]).toEqual(snapshot)
      expect((await rt.get(loud))?.status).toBe('done')
      // Compacted, its replay answers so instead of folding an empty journal.
      expect(await replayStored(db().pool, jobKind, loud)).toEqual({ compacted: true, compactedAt: expect.any(String) })
      expect(await rt.retention.backlog()).toBe(0)
      expect(await compactedAt(quiet)).toBeNull()
    } finally {
      await rt.stop()
    }
  })

  it('gives the window of the class the kind names, and waits for the effects the end asked for', async () => {
    // Not started: its effects stay open until the test reports their outcomes itself.
    const rt = runtime()
    const [quiet, loud] = [randomUUID(), randomUUID()]
    for (const [id, value] of [[quiet, 'quiet'], [loud, 'loud']] as const) {
      await rt.create('retjob', { id, accountId: randomUUID(), input: {} })
      await rt.send(id, { type: 'job.run' })
      const [work] = await q(`select id from effect where actor_id = $1 and kind = 'job.work'`, [id])
      await rt.send(id, { type: 'job.done', value, effectId: work.id })
    }
    await waitFor(async () => (await q(`select 1 from actor where id = $1 and compact_after < now()`, [quiet])).length === 1)
    expect((await q(`select 1 from actor where id = $1 and compact_after > now() + interval '59 minutes'`, [loud])).length).toBe(1)
    // Its work and notify effects are still open: not compacted.
    await rt.retention.sweep()
    expect(await compactedAt(quiet)).toBeNull()
    await q(`update effect set status = 'done' where actor_id = any($1)`, [[quiet, loud]])
    await rt.retention.sweep()
    expect(await compactedAt(quiet)).not.toBeNull()
    expect(await compactedAt(loud)).toBeNull()
  })

  it('never compacts an actor that has not ended, or one with an open effect, a pending inbox row, a dead letter or a live child', async () => {
    const rt = runtime()
    await rt.start()
    try {
      const live = randomUUID()
      await rt.create('retjob', { id: live, accountId: randomUUID(), input: {} })
      const ids = await Promise.all([0, 1, 2, 3].map(() => ended(rt)))
      // A pending inbox row would be drained and refused at once by a running runtime: stopped first.
      await rt.stop()
      await q(`update actor set compact_after = now() - interval '1 second' where id = any($1)`, [ids])
      const [withEffect, withInbox, withDead, withChild] = ids as [string, string, string, string]
      await q(`insert into effect (id, actor_id, account_id, kind, params, status) select 'open-' || id, id, account_id, 'job.notify', '{}', 'sent' from actor where id = $1`, [withEffect])
      await q(`insert into actor_inbox (actor_id, account_id, event) select id, account_id, '{"type":"job.run"}' from actor where id = $1`, [withInbox])
      await q(`insert into actor_inbox (actor_id, account_id, event, processed_at, dead_at, error) select id, account_id, '{"type":"job.run"}', now(), now(), 'boom' from actor where id = $1`, [withDead])
      await q(`insert into actor (id, kind, account_id, machine_version, status, state_value, snapshot, version, parent_id)
               select 'child-' || id, 'retjob', account_id, 1, 'working', '"working"', '{"status":"active"}', 1, id from actor where id = $1`, [withChild])
      await rt.retention.sweep()
      for (const id of [live, ...ids]) expect(await compactedAt(id)).toBeNull()
      expect(await rt.retention.backlog()).toBeGreaterThanOrEqual(4)
      await q(`delete from effect where id = 'open-' || $1`, [withEffect])
      await q(`update actor_inbox set processed_at = now() where actor_id = $1`, [withInbox])
      await q(`update actor_inbox set resolved_at = now(), resolution = 'discarded' where actor_id = $1`, [withDead])
      await q(`update actor set snapshot = '{"status":"done"}' where id = 'child-' || $1`, [withChild])
      await rt.retention.sweep()
      for (const id of ids) expect(await compactedAt(id)).not.toBeNull()
      expect(await compactedAt(live)).toBeNull()
    } finally {
      await rt.stop()
    }
  })

  it('answers a late event for a compacted actor as for an ended one, and expires applied inbox rows', async () => {
    const rt = runtime({ retention: { windowsMs: { default: 3_600_000, quiet: 1 }, inboxMs: 3_600_000, inboxByKeyPrefixMs: { 'keep:': 7_200_000 }, sweepMs: 3_600_000 } })
    await rt.start()
    try {
      const [compacted, endedOnly] = [await ended(rt), await ended(rt)]
      await q(`update actor set compact_after = now() - interval '1 second' where id = $1`, [compacted])
      await rt.retention.sweep()
      expect(await compactedAt(compacted)).not.toBeNull()
      for (const id of [compacted, endedOnly]) {
        await expect(rt.send(id, { type: 'job.run' })).rejects.toBeInstanceOf(ActorEventRefusedError)
        const version = (await rt.get(id))!.version
        await rt.enqueue(id, (await rt.get(id))!.accountId, { type: 'job.run' }, `late:${id}`)
        await waitFor(async () => (await q('select 1 from actor_inbox where actor_id = $1 and processed_at is null', [id])).length === 0)
        expect((await rt.get(id))!.version).toBe(version)
      }
      // Applied rows are kept for `inboxMs` (their dedupe keys with them), a listed prefix longer.
      await rt.enqueue(endedOnly, (await rt.get(endedOnly))!.accountId, { type: 'job.run' }, `keep:${endedOnly}`)
      await q(`update actor_inbox set processed_at = now() - interval '90 minutes' where actor_id = any($1) and processed_at is not null`, [[compacted, endedOnly]])
      await rt.retention.sweep()
      expect((await q('select dedupe_key from actor_inbox where actor_id = any($1) order by seq', [[compacted, endedOnly]])).map((r) => r.dedupe_key)).toEqual([`keep:${endedOnly}`])
      // With its key gone, the same late event is taken in again, and refused again.
      await rt.enqueue(compacted, (await rt.get(compacted))!.accountId, { type: 'job.run' }, `late:${compacted}`)
      expect((await q('select 1 from actor_inbox where dedupe_key = $1', [`late:${compacted}`])).length).toBe(1)
    } finally {
      await rt.stop()
    }
  })

  it('deletes the app rows a kind names with an actor that started no child, in its compaction; keeps those of one that started a child', async () => {
    await q('create table if not exists retjob_note (actor_id text not null, note text not null)')
    const retention = { windowsMs: { default: 3_600_000, quiet: 1 }, inboxMs: 3_600_000, sweepMs: 3_600_000, quietRows: { retjob: [{ table: 'retjob_note', column: 'actor_id' }] } }
    const rt = runtime({ retention })
    await rt.start()
    try {
      const alone = await ended(rt)
      const parent = await ended(rt)
      const child = randomUUID()
      await rt.create('retjob', { id: child, accountId: randomUUID(), input: {}, parentId: parent })
      await rt.send(child, { type: 'job.run' })
      await rt.waitFor(child, (e) => e.status === 'done', 10_000)
      for (const id of [alone, parent, child]) await q(`insert into retjob_note values ($1, 'a'), ($1, 'b')`, [id])
      await q(`update actor set compact_after = now() - interval '1 second' where id = any($1)`, [[alone, parent]])
      await waitFor(async () => {
        await rt.retention.sweep()
        return (await compactedAt(alone)) !== null && (await compactedAt(parent)) !== null
      }, 10_000)
      const notes = async (id: string) => Number((await q('select count(*) from retjob_note where actor_id = $1', [id]))[0].count)
      expect({ alone: await notes(alone), parent: await notes(parent), child: await notes(child) }).toEqual({ alone: 0, parent: 2, child: 2 })
      // A name that is not an identifier is refused before any SQL is sent.
      await expect(compactEnded(db().pool, 10, {}, { retjob: [{ table: 'retjob_note; drop table actor', column: 'actor_id' }] })).rejects.toThrow(/Not a table or column name/)
    } finally {
      await rt.stop()
    }
  })

  it('two nodes sweeping at once compact every due actor once', async () => {
    const rt = runtime()
    await rt.start()
    const ids: string[] = []
    try {
      for (let i = 0; i < 30; i++) ids.push(await ended(rt))
    } finally {
      await rt.stop()
    }
    await q(`update actor set compact_after = now() - interval '1 second' where id = any($1)`, [ids])
    const nodes = [runtime({ retention: { windowsMs: { default: 1 }, inboxMs: 3_600_000, sweepMs: 3_600_000, batchSize: 4 } }), runtime({ retention: { windowsMs: { default: 1 }, inboxMs: 3_600_000, sweepMs: 3_600_000, batchSize: 4 } })]
    const done = await Promise.all(nodes.map((n) => n.retention.sweep()))
    expect(done[0]!.compacted + done[1]!.compacted).toBe(30)
    expect((await q('select count(*)::int as n from actor where id = any($1) and compacted_at is not null', [ids]))[0].n).toBe(30)
    expect((await q('select count(*)::int as n from actor_journal where actor_id = any($1)', [ids]))[0].n).toBe(0)
  })

  it('a kill -9 in the middle of a batch leaves every actor of it whole, and the next sweep compacts them', async () => {
    // 2,000 ended actors with 40 journal entries each, written directly: the batch's statement runs long enough to be killed.
    const tag = randomUUID()
    await q(`insert into actor (id, kind, account_id, machine_version, status, state_value, snapshot, version, compact_after)
             select $1 || '-' || g, 'retjob', gen_random_uuid(), 1, 'done', '"done"', '{"status":"done"}', 40, now() - interval '1 second'
               from generate_series(1, 2000) g`, [tag])
    await q(`insert into actor_journal (actor_id, seq, account_id, event, state_value)
             select a.id, s, a.account_id, jsonb_build_object('type', 'x', 'pad', repeat('p', 200)), '"done"' from actor a, generate_series(1, 40) s where a.id like $1 || '-%'`, [tag])
    const o = (db().pool as unknown as { options: { host: string; port: number; user: string; password?: string; database: string } }).options
    const url = `postgres://${encodeURIComponent(o.user)}${o.password ? `:${encodeURIComponent(o.password)}` : ''}@${o.host}:${o.port}/${o.database}`
    const script = `import pg from 'pg'; import { compactEnded } from ${JSON.stringify(fileURLToPath(new URL('../src/actors/runtime/compaction.store.ts', import.meta.url)))};
      const pool = new pg.Pool({ connectionString: process.env.URL, max: 1 }); await pool.query("set application_name = 'retention-kill'"); await compactEnded(pool, 5000)`
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { env: { ...process.env, URL: url }, stdio: ['ignore', 'ignore', 'pipe'] })
    let stderr = ''
    child.stderr!.on('data', (d) => (stderr += String(d)))
    try {
      await waitFor(async () => (await q(`select 1 from pg_stat_activity where application_name = 'retention-kill' and state = 'active' and query like '%actor_journal%'`)).length > 0, 20_000).catch((err: Error) => {
        throw new Error(`${err.message}; the sweeping process said: ${stderr}`)
      })
      child.kill('SIGKILL')
      await new Promise((r) => child.once('exit', r))
      await waitFor(async () => (await q(`select 1 from pg_stat_activity where application_name = 'retention-kill'`)).length === 0, 20_000)
    } finally {
      child.kill('SIGKILL')
    }
    const state = await q(`select a.compacted_at is not null as compacted, (select count(*)::int from actor_journal j where j.actor_id = a.id) as journal
                             from actor a where a.id like $1 || '-%'`, [tag])
    expect(state).toHaveLength(2000)
    // Whole or compacted, never half: the batch is one statement (killed before its commit, it left all 2,000 whole).
    expect(state.filter((s) => !(s.compacted ? s.journal === 0 : s.journal === 40))).toEqual([])
    expect([0, 2000]).toContain(state.filter((s) => s.compacted).length)
    const rt = runtime({ retention: { windowsMs: { default: 1 }, inboxMs: 3_600_000, sweepMs: 3_600_000, batchSize: 1000 } })
    await rt.retention.sweep()
    expect((await q(`select count(*)::int as n from actor where id like $1 || '-%' and compacted_at is null`, [tag]))[0].n).toBe(0)
    expect((await q(`select count(*)::int as n from actor_journal where actor_id like $1 || '-%'`, [tag]))[0].n).toBe(0)
  })

  it('trims a live actor\'s history past its window to a checkpoint it still replays from, again and again', async () => {
    const loopMachine = setup({
      types: { context: {} as { n: number }, events: {} as { type: 'tick' } | { type: 'tock'; effectId: string }, input: {} as Record<string, never> },
      actions: { 'loop.work': () => {} },
    }).createMachine({
      id: 'loop', initial: 'on', context: { n: 0 },
      states: { on: { on: { tick: { actions: { type: 'loop.work' } }, tock: { actions: assign({ n: ({ context }) => context.n + 1 }) } } } },
    })
    const loopKind: ActorKind = { kind: 'retloop', machine: loopMachine, machineVersion: 1, parseEvent: (e) => e as AnyEventObject, statusOf: () => 'on', effects: ['loop.work'] }
    const rt = createActorRuntime({
      pool: db().pool, kinds: [loopKind], logger, pollMs: 50,
      effectHandlers: { 'loop.work': async (effect) => ({ type: 'tock', effectId: effect.id }) },
      retention: { windowsMs: { default: 3_600_000 }, liveHistoryMs: 1, inboxMs: 3_600_000, sweepMs: 3_600_000 },
    })
    await rt.start()
    try {
      const id = randomUUID()
      await rt.create('retloop', { id, accountId: randomUUID(), input: {} })
      const ticks = async (n: number) => {
        const before = (await rt.get(id))!.snapshot.context.n as number
        for (let i = 0; i < n; i++) await rt.send(id, { type: 'tick' })
        await rt.waitFor(id, (e) => e.snapshot.context.n === before + n, 10_000)
      }
      await ticks(5)
      expect((await history(id)).journal).toBe(11)
      expect((await history(id)).effects).toBe(5)
      // Every entry is past the 1 ms window: the journal becomes one checkpoint at the latest seq, the finished effects go.
      await new Promise((r) => setTimeout(r, 5))
      await rt.retention.sweep()
      const journal = await q('select seq, event from actor_journal where actor_id = $1 order by seq', [id])
      expect(journal.map((j) => [Number(j.seq), j.event.type])).toEqual([[11, 'actor.checkpoint']])
      expect((await history(id)).effects).toBe(0)
      const stored = (await q('select snapshot, status from actor where id = $1', [id]))[0]
      expect(await replayStored(db().pool, loopKind, id)).toMatchObject({ compacted: false, persisted: stored.snapshot, foldedFrom: 11 })
      // It lives on: new entries after the checkpoint, replayed from it; trimmed again later.
      await ticks(3)
      const now = (await q('select snapshot from actor where id = $1', [id]))[0].snapshot
      expect(now.context.n).toBe(8)
      expect(await replayStored(db().pool, loopKind, id)).toMatchObject({ persisted: now, foldedFrom: 11 })
      await new Promise((r) => setTimeout(r, 5))
      await rt.retention.sweep()
      expect((await q('select seq, event from actor_journal where actor_id = $1 order by seq', [id])).map((j) => [Number(j.seq), j.event.type])).toEqual([[17, 'actor.checkpoint']])
      expect(await replayStored(db().pool, loopKind, id)).toMatchObject({ persisted: now, foldedFrom: 17 })
      await ticks(1)
      expect((await rt.get(id))!.snapshot.context.n).toBe(9)
    } finally {
      await rt.stop()
    }
  })
})

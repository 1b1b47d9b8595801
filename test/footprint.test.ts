import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type Api, type TestApp } from './support/app.ts'
import { startModelServer, type ModelServer } from './support/modelServer.ts'
import { waitFor } from './support/waitFor.ts'

/**
 * What an ended run leaves in the database, measured as a user would: 20 agents on a 2 s interval
 * doing nothing (the scripted model answers at once), tables' total size (indexes and TOAST
 * included) after `vacuum analyze`, before the runs and after, divided by the runs. Then the
 * same after the compaction of every one of them (its window shortened here). Page granularity
 * makes few runs noisy: about 300 are measured. The agents' own history (two journal entries
 * and an effect a run) and applied inbox events are given a few seconds' window here, so what
 * is measured is the steady state of a fleet that runs for months.
 */
const TABLES = ['actor', 'actor_journal', 'actor_inbox', 'actor_timer', 'effect', 'account_event', 'chat_message', 'credit_entry', 'credit_reservation']
let model: ModelServer
let app: TestApp
let api: Api

beforeAll(async () => {
  model = await startModelServer()
  model.mock.on({}, { content: 'Nothing worth doing.', usage: { prompt_tokens: 200, completion_tokens: 3 } })
  app = await startTestApp({
    OPENAI_BASE_URL: model.baseUrl, OPENAI_API_KEY: 'test-key', RUN_MIN_INTERVAL_SECONDS: '1', LOG_LEVEL: 'error',
    STARTER_CREDITS: '1000000', ACTOR_RETENTION_QUIET_MINUTES: '60', RETENTION_SWEEP_SECONDS: '0.2', ACTOR_LIVE_HISTORY_HOURS: '0.001', INBOX_RETENTION_HOURS: '0.001',
  })
  ;({ api } = await app.account())
})
afterAll(async () => {
  await app?.close()
  await model?.stop()
})

const q = async (sql: string, params: unknown[] = []) => (await app.services.pool.query(sql, params)).rows
async function sizes(): Promise<Record<string, number>> {
  // A dead row is reclaimed only once no transaction of this database can still see it: vacuum
  // until none is left (a poll or commit in flight may hold a snapshot for a moment), then
  // rewrite the tables to their live rows.
  await waitFor(async () => {
    await q(`vacuum (analyze) ${TABLES.join(', ')}`)
    const dead = await q(`select coalesce(sum(n_dead_tup), 0)::int as n from pg_stat_user_tables where relname = any($1)`, [TABLES])
    return dead[0].n === 0
  }, 30_000)
  await q(`vacuum (full, analyze) ${TABLES.join(', ')}`)
  const rows = await q(`select relname, pg_total_relation_size(oid)::bigint as bytes from pg_class where relname = any($1) and relkind = 'r'`, [TABLES])
  return Object.fromEntries(rows.map((r) => [r.relname, Number(r.bytes)]))
}
const perRun = (before: Record<string, number>, after: Record<string, number>, runs: number) =>
  Object.fromEntries(TABLES.map((t) => [t, Math.round(((after[t] ?? 0) - (before[t] ?? 0)) / runs)]))
const total = (bytes: Record<string, number>, tables = TABLES) => tables.reduce((s, t) => s + (bytes[t] ?? 0), 0)
const runCount = async () => Number((await q(`select count(*) from actor where kind = 'run' and snapshot->>'status' = 'done'`))[0].count)

describe('the footprint of an ended run', () => {
  it('a scheduled run that did nothing: in full, then compacted', async () => {
    const agents: string[] = []
    for (let i = 0; i < 20; i++) agents.push((await api('POST', '/agents', { name: `quiet-${i}`, run_interval_seconds: 2 })).body.id)
    const before = await sizes()
    for (const a of agents) expect((await api('POST', `/agents/${a}/start`)).status).toBe(200)
    await waitFor(async () => (await runCount()) >= 300, 60_000)
    for (const a of agents) expect((await api('POST', `/agents/${a}/stop`)).status).toBe(200)
    await waitFor(async () => Number((await q(`select count(*) from actor where kind = 'run' and snapshot->>'status' <> 'done'`))[0].count) === 0, 20_000)
    const runs = await runCount()
    const full = perRun(before, await sizes(), runs)
    console.log('bytes per scheduled run, in full', JSON.stringify(full), 'total', total(full))

    await q(`update actor set compact_after = now() where kind = 'run' and compacted_at is null`)
    await waitFor(async () => Number((await q(`select count(*) from actor where kind = 'run' and compacted_at is null`))[0].count) === 0, 30_000)
    const compacted = perRun(before, await sizes(), runs)
    console.log('bytes per scheduled run, compacted', JSON.stringify(compacted), 'total', total(compacted))
    expect(runs).toBeGreaterThanOrEqual(300)
    // Pinned (docs/benchmarks.md, "What an ended run leaves"), about 5 % above the figures measured
    // (9,148 in full, 4,423 compacted): the runtime's rows of a run in its window (its row, journal,
    // effects, inbox; the agent's share of the schedule trimmed as its window passes), every table
    // in full, what the compaction leaves of the runtime's rows besides the run's own, the run's
    // row (the summary the API serves), and its chat messages (a quiet run's go with its history).
    const RUNTIME = ['actor', 'actor_journal', 'actor_inbox', 'actor_timer', 'effect']
    expect(total(full, RUNTIME)).toBeLessThanOrEqual(6_050)
    expect(total(full)).toBeLessThanOrEqual(9_600)
    expect(total(compacted, ['actor_journal', 'actor_inbox', 'actor_timer', 'effect'])).toBeLessThanOrEqual(500)
    expect(compacted.actor).toBeLessThanOrEqual(1_650)
    expect(compacted.chat_message).toBeLessThanOrEqual(0)
    expect(total(compacted)).toBeLessThanOrEqual(4_650)
  })
})

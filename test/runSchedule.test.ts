import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type Api, type TestApp } from './support/app.ts'
import { startModelServer, type ModelServer } from './support/modelServer.ts'
import { waitFor } from './support/waitFor.ts'
import { expectReplaysFromMigration } from './support/replayCheck.ts'
import { agentKind } from '../src/actors/agent/agent.machine.ts'
import { GENERIC_RUN_GOAL } from '../src/domain/runs/startScheduledRun.ts'
import { STRATEGY_PRESETS } from '../src/domain/skills/builtinSkills.ts'

const SCHEDULE_ENV = { RUN_MIN_INTERVAL_SECONDS: '1' }
const MONITOR_GOAL = STRATEGY_PRESETS.find((p) => p.slug === 'monitor-exit')!.goal

type Run = { id: string; status: string; trigger: string; createdAt: string }
const runsOf = async (api: Api, agentId: string): Promise<Run[]> => (await api('GET', `/agents/${agentId}/runs?limit=100`)).body.runs
/** Milliseconds between consecutive run starts, oldest first. */
const gaps = (runs: Run[]) => runs.slice(1).map((r, i) => Date.parse(r.createdAt) - Date.parse(runs[i]!.createdAt))

describe('agents that run on their own', () => {
  let model: ModelServer
  let app: TestApp
  let api: Api
  beforeAll(async () => {
    model = await startModelServer()
    model.mock.on({ userMessage: GENERIC_RUN_GOAL, hasToolResult: false }, { content: 'Nothing worth doing.' })
    model.mock.on({ userMessage: MONITOR_GOAL, hasToolResult: false }, { content: 'Held everything.' }, { chaos: { latencyMs: 2500 } })
    app = await startTestApp({ OPENAI_BASE_URL: model.baseUrl, OPENAI_API_KEY: 'test-key', ...SCHEDULE_ENV })
    ;({ api } = await app.account())
  })
  afterAll(async () => {
    await app?.close()
    await model?.stop()
  })

  /** The agent's durable timers: key and milliseconds until due. */
  const timersOf = async (agentId: string) =>
    (await app.services.pool.query<{ key: string; inMs: number }>(
      `select timer_key as key, (extract(epoch from due_at - now()) * 1000)::float8 as "inMs" from actor_timer where actor_id = $1`, [agentId])).rows
  /** When the agent's one timer is due (epoch ms). */
  const dueAtOf = async (agentId: string) =>
    (await app.services.pool.query<{ ms: number }>(`select (extract(epoch from due_at) * 1000)::float8 as ms from actor_timer where actor_id = $1`, [agentId])).rows[0]!.ms

  it('a running agent with a 2-second interval runs on its own, every 2 s to the second; stopped, it does not and holds no timer', async () => {
    const a = (await api('POST', '/agents', { name: 'scheduled', run_interval_seconds: 2 })).body.id
    const control = (await api('POST', '/agents', { name: 'control', run_interval_seconds: 2 })).body.id
    expect((await api('POST', `/agents/${a}/start`)).status).toBe(200)
    expect((await api('POST', `/agents/${control}/start`)).status).toBe(200)
    await waitFor(async () => (await runsOf(api, a)).filter((r) => r.status === 'completed').length >= 3, 20_000)
    const runs = (await runsOf(api, a)).reverse()
    expect(runs.every((r) => r.trigger === 'schedule')).toBe(true)
    // Each run starts when the interval since the last one's start has passed: not earlier, and
    // within a second of it (not rounded up to a tick).
    for (const gap of gaps(runs)) {
      expect(gap).toBeGreaterThanOrEqual(1750)
      expect(gap).toBeLessThan(3000)
    }
    // One timer while running, due at the next run.
    const [timer, ...more] = await timersOf(a)
    expect(more).toEqual([])
    expect(timer).toMatchObject({ key: 'agent.due' })
    expect(timer!.inMs).toBeLessThanOrEqual(2000)
    const run = (await api('GET', `/runs/${runs[0]!.id}`)).body
    expect(run).toMatchObject({ goal: GENERIC_RUN_GOAL, summary: 'Nothing worth doing.', status: 'completed' })

    expect((await api('POST', `/agents/${a}/stop`)).status).toBe(200)
    expect(await timersOf(a)).toEqual([])
    await waitFor(async () => (await runsOf(api, a)).every((r) => r.status !== 'running'), 10_000)
    const stoppedWith = (await runsOf(api, a)).length
    // The control agent runs twice more meanwhile; the stopped one never again.
    const controlRuns = (await runsOf(api, control)).length
    await waitFor(async () => (await runsOf(api, control)).length >= controlRuns + 2, 20_000)
    expect((await runsOf(api, a)).length).toBe(stoppedWith)
    expect(await timersOf(a)).toEqual([])
    expect((await api('POST', `/agents/${control}/stop`)).status).toBe(200)
  })

  it('an interval of 0 holds no timer; a change of the interval re-arms it at once', async () => {
    const a = (await api('POST', '/agents', { name: 'rescheduled', run_interval_seconds: 0 })).body.id
    expect((await api('POST', `/agents/${a}/start`)).status).toBe(200)
    const checks = async () =>
      (await app.services.pool.query(`select event->>'reason' as reason from actor_journal where actor_id = $1 and event->>'type' = 'agent.run.skipped' order by seq`, [a])).rows.map((r) => r.reason)
    // Created with no interval: the start checks nothing (no effect at all), holds no timer.
    const { rows: effects } = await app.services.pool.query(`select kind from effect where actor_id = $1`, [a])
    expect(effects).toEqual([])
    expect(await checks()).toEqual([])
    expect(await timersOf(a)).toEqual([])

    // On: a run at once (never run), then every 2 s.
    expect((await api('PATCH', `/agents/${a}`, { run_interval_seconds: 2 })).status).toBe(200)
    await waitFor(async () => (await runsOf(api, a)).length >= 2, 20_000)
    for (const gap of gaps((await runsOf(api, a)).reverse())) expect(gap).toBeGreaterThanOrEqual(1750)

    // Longer: the timer moves to the last run's start plus the new interval.
    expect((await api('PATCH', `/agents/${a}`, { run_interval_seconds: 60 })).status).toBe(200)
    await waitFor(async () => {
      const [t] = await timersOf(a)
      return t !== undefined && t.inMs > 50_000
    }, 10_000)
    const [last] = await runsOf(api, a)
    const [timer] = await timersOf(a)
    const dueAt = await dueAtOf(a)
    expect(Math.abs(dueAt - (Date.parse(last!.createdAt) + 60_000))).toBeLessThan(1000)
    expect(timer!.inMs).toBeLessThanOrEqual(60_000)

    // Off again: the timer goes, and no run starts.
    const count = (await runsOf(api, a)).length
    expect((await api('PATCH', `/agents/${a}`, { run_interval_seconds: 0 })).status).toBe(200)
    await waitFor(async () => (await timersOf(a)).length === 0, 10_000)
    expect((await checks()).at(-1)).toBe('off')
    expect((await runsOf(api, a)).length).toBe(count)
    expect((await api('POST', `/agents/${a}/stop`)).status).toBe(200)
  })

  it('an agent stored by machine version 1 (its tick armed) keeps running: the tick fires once as a check, then one due timer', async () => {
    const a = (await api('POST', '/agents', { name: 'upgraded', run_interval_seconds: 60 })).body.id
    expect((await api('POST', `/agents/${a}/start`)).status).toBe(200)
    await waitFor(async () => (await runsOf(api, a)).some((r) => r.status === 'completed'), 20_000)
    await waitFor(async () => (await timersOf(a)).length === 1, 10_000)
    const [first] = await runsOf(api, a)
    // Rewrite the agent as version 1 stored it: the tick's context, its tick timer due in 1 s, no due timer.
    const { pool, runtime } = app.services
    await pool.query(
      `with v1 as (
         update actor set machine_version = 1, timers = '{"xstate.after.tick.agent.running": 999000}'::jsonb,
                snapshot = jsonb_set(snapshot, '{context}', (snapshot->'context') - 'dueAt' - 'legacyTick' || '{"tickMs": 60000, "ticks": 4}'::jsonb)
          where id = $1 returning id, account_id
       ), gone as (delete from actor_timer where actor_id = $1)
       insert into actor_timer (actor_id, timer_key, account_id, generation, due_at, event)
       select id, 'xstate.after.tick.agent.running', account_id, 999000, now() + interval '1 second', '{"type": "xstate.after.tick.agent.running"}'::jsonb from v1`,
      [a],
    )
    runtime.forget(a)
    // The old tick fires (its inbox row, processed); the machine hears it as its own `agent.due` (the kind's renamedTimers).
    const ticks = async () => (await pool.query(`select count(*)::int as n from actor_inbox where actor_id = $1 and timer_key = 'xstate.after.tick.agent.running' and processed_at is not null`, [a])).rows[0].n
    await waitFor(async () => (await ticks()) === 1, 10_000)
    await waitFor(async () => (await timersOf(a)).some((t) => t.key === 'agent.due'), 10_000)
    const { rows: [row] } = await pool.query(`select machine_version, timers, snapshot->'context' as context from actor where id = $1`, [a])
    expect(row.machine_version).toBe(2)
    expect(Object.keys(row.timers)).toEqual(['agent.due'])
    expect(row.context).not.toHaveProperty('tickMs')
    expect(row.context).not.toHaveProperty('legacyTick')
    const journaled = (await pool.query(`select event->>'type' as type from actor_journal where actor_id = $1 and event->>'type' like 'xstate.after%'`, [a])).rows
    expect(journaled).toEqual([])
    // Due a minute after its last run, as if it had never been stored under version 1; no run doubled.
    const dueAt = await dueAtOf(a)
    expect(Math.abs(dueAt - (Date.parse(first!.createdAt) + 60_000))).toBeLessThan(1000)
    expect(await runsOf(api, a)).toHaveLength(1)
    expect(await ticks()).toBe(1)
    expect((await api('POST', `/agents/${a}/stop`)).status).toBe(200)
    expect(await timersOf(a)).toEqual([])
    // Its journal spans the bump (the loader journaled the migration) and replays to what is stored.
    await expectReplaysFromMigration(pool, agentKind, a, 1)
  })

  it('a run due during a run in progress is skipped and journaled; the next starts as soon as that run ends', async () => {
    const agent = (await api('POST', '/agents', { name: 'overrun', strategy: 'monitor-exit', run_interval_seconds: 2 })).body.id
    expect((await api('POST', `/agents/${agent}/start`)).status).toBe(200)
    await waitFor(async () => (await runsOf(api, agent)).length >= 2, 20_000)
    const [first, second] = (await runsOf(api, agent)).reverse()
    const skips = await app.services.pool.query(`select 1 from actor_journal where actor_id = $1 and event->>'reason' = 'run_in_progress'`, [agent])
    expect(skips.rows.length).toBeGreaterThanOrEqual(1)
    // The first run (2.5 s of model latency) overran its 2 s due time: the second started when it
    // ended, not at the skipped check's fallback a whole interval later (4 s).
    const firstRun = (await api('GET', `/runs/${first!.id}`)).body
    expect(firstRun.status).toBe('completed')
    const gap = Date.parse(second!.createdAt) - Date.parse(first!.createdAt)
    expect(gap).toBeGreaterThanOrEqual(2500)
    expect(gap).toBeLessThan(3900)
    expect(Date.parse(second!.createdAt) - Date.parse(firstRun.updatedAt)).toBeLessThan(1000)
    expect((await api('POST', `/agents/${agent}/stop`)).status).toBe(200)
  })

  it('a check during a run is skipped and journaled; stopping the agent stops its run in progress', async () => {
    const agent = (await api('POST', '/agents', { name: 'slow', strategy: 'monitor-exit', run_interval_seconds: 1 })).body.id
    expect((await api('POST', `/agents/${agent}/start`)).status).toBe(200)
    await waitFor(async () => (await runsOf(api, agent)).length === 1, 20_000)
    const skipped = async () =>
      (await app.services.pool.query(`select 1 from actor_journal where actor_id = $1 and event->>'type' = 'agent.run.skipped' and event->>'reason' = 'run_in_progress'`, [agent])).rows.length
    await waitFor(async () => (await skipped()) >= 1, 20_000)
    expect(await runsOf(api, agent)).toHaveLength(1)
    const [running] = await runsOf(api, agent)
    expect(running).toMatchObject({ status: 'running', trigger: 'schedule' })
    expect((await api('GET', `/runs/${running!.id}`)).body.goal).toBe(MONITOR_GOAL)

    expect((await api('POST', `/agents/${agent}/stop`)).status).toBe(200)
    await waitFor(async () => (await api('GET', `/runs/${running!.id}`)).body.status === 'stopped', 20_000)
    expect(await runsOf(api, agent)).toHaveLength(1)
  })
})

describe('a scheduled agent without a model provider', () => {
  let app: TestApp
  beforeAll(async () => {
    app = await startTestApp({ ...SCHEDULE_ENV })
  })
  afterAll(async () => {
    await app?.close()
  })

  it('pauses with the reason instead of failing on every check; start resumes it', async () => {
    const { api } = await app.account()
    const agent = (await api('POST', '/agents', { name: 'no-provider', run_interval_seconds: 1 })).body.id
    expect((await api('POST', `/agents/${agent}/start`)).status).toBe(200)
    await waitFor(async () => (await api('GET', `/agents/${agent}`)).body.status === 'paused', 20_000)
    expect((await api('GET', `/agents/${agent}`)).body).toMatchObject({ status: 'paused', statusReason: 'model_provider_not_configured' })
    expect(await runsOf(api, agent)).toEqual([])
    const resumed = await api('POST', `/agents/${agent}/start`)
    expect(resumed.status).toBe(200)
    expect(resumed.body.status).toBe('running')
  })
})

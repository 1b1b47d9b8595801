import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type Api, type TestApp } from './support/app.ts'
import { startModelServer, type ModelServer } from './support/modelServer.ts'
import { waitFor } from './support/waitFor.ts'
import { GENERIC_RUN_GOAL } from '../src/domain/runs/startScheduledRun.ts'
import { STRATEGY_PRESETS } from '../src/domain/skills/builtinSkills.ts'

const SCHEDULE_ENV = { AGENT_TICK_SECONDS: '0.5', RUN_MIN_INTERVAL_SECONDS: '1' }
const MONITOR_GOAL = STRATEGY_PRESETS.find((p) => p.slug === 'monitor-exit')!.goal

type Run = { id: string; status: string; trigger: string; createdAt: string }
const runsOf = async (api: Api, agentId: string): Promise<Run[]> => (await api('GET', `/agents/${agentId}/runs?limit=100`)).body.runs

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

  it('a running agent with a 2-second interval runs on its own; stopped, it does not', async () => {
    const a = (await api('POST', '/agents', { name: 'scheduled', run_interval_seconds: 2 })).body.id
    const control = (await api('POST', '/agents', { name: 'control', run_interval_seconds: 2 })).body.id
    expect((await api('POST', `/agents/${a}/start`)).status).toBe(200)
    expect((await api('POST', `/agents/${control}/start`)).status).toBe(200)
    await waitFor(async () => (await runsOf(api, a)).filter((r) => r.status === 'completed').length >= 2, 20_000)
    const runs = (await runsOf(api, a)).reverse()
    expect(runs.every((r) => r.trigger === 'schedule')).toBe(true)
    // Never more often than the interval (less half a tick of slack).
    for (let i = 1; i < runs.length; i++) expect(Date.parse(runs[i]!.createdAt) - Date.parse(runs[i - 1]!.createdAt)).toBeGreaterThanOrEqual(1700)
    const run = (await api('GET', `/runs/${runs[0]!.id}`)).body
    expect(run).toMatchObject({ goal: GENERIC_RUN_GOAL, summary: 'Nothing worth doing.', status: 'completed' })

    expect((await api('POST', `/agents/${a}/stop`)).status).toBe(200)
    await waitFor(async () => (await runsOf(api, a)).every((r) => r.status !== 'running'), 10_000)
    const stoppedWith = (await runsOf(api, a)).length
    // The control agent runs twice more meanwhile; the stopped one never again.
    const controlRuns = (await runsOf(api, control)).length
    await waitFor(async () => (await runsOf(api, control)).length >= controlRuns + 2, 20_000)
    expect((await runsOf(api, a)).length).toBe(stoppedWith)
    expect((await api('POST', `/agents/${control}/stop`)).status).toBe(200)
  })

  it('a tick during a run is skipped and journaled; stopping the agent stops its run in progress', async () => {
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

  it('pauses with the reason instead of failing on every tick; start resumes it', async () => {
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

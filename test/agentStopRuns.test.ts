import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type Api, type TestApp } from './support/app.ts'
import { startModelServer, type ModelServer } from './support/modelServer.ts'
import { waitFor } from './support/waitFor.ts'

/*
 * An agent's stop ends its run in progress in an effect run after the stop's commit
 * (`agent.stopRuns`). A run may start on a stopped agent: one started through the API once the
 * stop has committed, before that effect ran, is not the run the stop meant, and must not end
 * `stopped` by it. The effect is held back for real: the node's runtime is stopped (a node
 * going down after the stop's commit), so the stop's commit writes its effect unclaimed and
 * nothing runs it; the runtime is started again once the run exists, and takes the effect over
 * as a node taking over a dead node's work would. No sleeps: every wait is on a fact.
 */
let model: ModelServer
let app: TestApp
let api: Api

const q = async (sql: string, values: unknown[] = []) => (await app.services.pool.query(sql, values)).rows
const ACTIVE = ['queued', 'running']
/** A model call that answers late (the run is still in progress when the stop's effect runs). */
const SLOW = { chaos: { latencyMs: 1500 } }
/** The agent's stop effects: their status and whether a worker holds one. */
const stopEffects = (agentId: string) =>
  q(`select status, claimed_by from effect where actor_id = $1 and kind = 'agent.stopRuns' order by created_at`, [agentId]) as Promise<Array<{ status: string; claimed_by: string | null }>>
const runRow = async (runId: string) => (await q(`select status from actor where id = $1 and kind = 'run'`, [runId]))[0]?.status as string | undefined
const runStatus = async (runId: string) => (await api('GET', `/runs/${runId}`)).body.status as string
const ended = async (runId: string) => !ACTIVE.includes(await runStatus(runId))

/** A started agent that runs nothing on its own (no schedule: every run is one the test starts). */
async function startedAgent(name: string): Promise<string> {
  const created = await api('POST', '/agents', { name, skills: ['trading'], run_interval_seconds: 0 })
  expect(created.status, JSON.stringify(created.body)).toBe(201)
  expect((await api('POST', `/agents/${created.body.id}/start`)).body.status).toBe('running')
  return created.body.id
}

/** Stops the node's runtime (nothing of it runs: effects committed now are written unclaimed and wait). */
async function holdEffects(): Promise<void> {
  await app.services.runtime.stop()
}
/** Starts it again: it takes its shards and runs the effects left waiting. */
async function releaseEffects(): Promise<void> {
  await app.services.runtime.start()
}

beforeAll(async () => {
  model = await startModelServer()
  app = await startTestApp({ OPENAI_BASE_URL: model.baseUrl, OPENAI_API_KEY: 'test-key' })
  ;({ api } = await app.account())
}, 60_000)
afterAll(async () => {
  await app?.close()
  await model?.stop()
})

describe("an agent's stop ends only the run started before it", () => {
  it('a run started through the API after the stop, before its effect ran, is not stopped by it', async () => {
    const agentId = await startedAgent('stopped-then-run')
    // The run's one model call answers late: it is still in progress when the stop's effect runs.
    model.mock.on({ userMessage: 'a run after the stop', hasToolResult: false }, { content: 'done after the stop' }, SLOW)
    await holdEffects()
    let runId = ''
    try {
      const stopped = await api('POST', `/agents/${agentId}/stop`)
      expect(stopped.status).toBe(200)
      expect(stopped.body.status).toBe('stopped')
      const started = await api('POST', `/agents/${agentId}/runs`, { goal: 'a run after the stop', maxSteps: 2 })
      expect(started.status, JSON.stringify(started.body)).toBe(202)
      runId = started.body.id
      // The order the race needs: the stop committed, the run created, the stop's effect not run yet.
      expect(await stopEffects(agentId)).toEqual([{ status: 'pending', claimed_by: null }])
      expect(ACTIVE).toContain(await runRow(runId))
    } finally {
      await releaseEffects()
    }
    // The stop's effect has run (and looked for the agent's run in progress)...
    await waitFor(async () => (await stopEffects(agentId)).every((e) => e.status === 'done'), 20_000)
    // ...and left the new run alone: it is not stopped, and completes.
    expect(await runStatus(runId)).not.toBe('stopped')
    expect(await runRow(runId)).not.toBe('stopped')
    await waitFor(() => ended(runId), 20_000)
    expect(await runStatus(runId)).toBe('completed')
    expect(await runRow(runId)).toBe('completed')
    expect((await api('GET', `/agents/${agentId}`)).body.status).toBe('stopped')
  })

  it('a run in progress before the stop ends stopped, also when the stop\'s effect runs late', async () => {
    const agentId = await startedAgent('run-then-stopped')
    model.mock.on({ userMessage: 'a run before the stop', hasToolResult: false }, { content: 'too late' }, SLOW)
    await holdEffects()
    let runId = ''
    try {
      const started = await api('POST', `/agents/${agentId}/runs`, { goal: 'a run before the stop', maxSteps: 2 })
      expect(started.status, JSON.stringify(started.body)).toBe(202)
      runId = started.body.id
      expect((await api('POST', `/agents/${agentId}/stop`)).body.status).toBe('stopped')
      expect(await stopEffects(agentId)).toEqual([{ status: 'pending', claimed_by: null }])
    } finally {
      await releaseEffects()
    }
    await waitFor(() => ended(runId), 20_000)
    expect(await runStatus(runId)).toBe('stopped')
    expect(await runRow(runId)).toBe('stopped')
    expect((await stopEffects(agentId)).map((e) => e.status)).toEqual(['done'])
  })

  it('a run in progress before the stop ends stopped (the effect run at once by the node that committed the stop)', async () => {
    const agentId = await startedAgent('running-run-stopped')
    model.mock.on({ userMessage: 'a run the stop ends', hasToolResult: false }, { content: 'too late' }, SLOW)
    const started = await api('POST', `/agents/${agentId}/runs`, { goal: 'a run the stop ends', maxSteps: 2 })
    expect(started.status, JSON.stringify(started.body)).toBe(202)
    const runId: string = started.body.id
    // Its model call is under way.
    await waitFor(async () => (await q(`select 1 from effect where actor_id = $1 and kind = 'run.model' and claimed_by is not null and status <> 'done'`, [runId])).length === 1, 10_000)
    expect((await api('POST', `/agents/${agentId}/stop`)).body.status).toBe('stopped')
    await waitFor(() => ended(runId), 20_000)
    expect(await runStatus(runId)).toBe('stopped')
    expect(await runRow(runId)).toBe('stopped')
  })
})

import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { apiClient, startTestApp, type Api, type TestApp } from './support/app.ts'
import { startModelServer, type ModelServer } from './support/modelServer.ts'
import { waitFor } from './support/waitFor.ts'

let model: ModelServer
let app: TestApp
let api: Api
let apiKey: string
let agentId: string

/** POST /api/mcp/call with the account's key. */
const call = (name: string, args: Record<string, unknown> = {}) => apiClient(`${app.url}/api`, apiKey)('POST', '/mcp/call', { name, arguments: args })

beforeAll(async () => {
  model = await startModelServer()
  app = await startTestApp({ OPENAI_BASE_URL: model.baseUrl, OPENAI_API_KEY: 'test-key' })
  ;({ api, apiKey } = await app.account())
  agentId = (await api('POST', '/agents', { name: 'steered', skills: [] })).body.id
})
afterAll(async () => {
  await app?.close()
  await model?.stop()
})
beforeEach(() => model.mock.reset())

describe('the run tools (MCP over plain HTTP)', () => {
  it('starts a run, lists it, reads its steps', async () => {
    model.mock.on({ userMessage: 'say hello' }, { content: 'Hello, done.' })
    const started = await call('create_agent_run', { goal: 'say hello', maxSteps: 2 })
    expect(started.status).toBe(200)
    const runId = started.body.result.id as string
    expect(started.body.result).toMatchObject({ agentId, goal: 'say hello', budgets: { maxSteps: 2 } })
    let run: { status: string } = { status: 'running' }
    await waitFor(async () => {
      run = (await call('get_agent_run_steps', { run_id: runId })).body.result
      return run.status === 'completed'
    }, 30_000)
    expect(run).toMatchObject({ status: 'completed', used: { steps: 1 } })
    const listed = await call('list_agent_runs', { status: 'completed' })
    expect(listed.body.result.runs.map((r: { id: string }) => r.id)).toContain(runId)
  })

  it('cancels a run; another agent id and an unknown run are not found', async () => {
    model.mock.onMessage('wait for me', async () => {
      await new Promise((r) => setTimeout(r, 1500))
      return { content: 'late' }
    })
    await waitFor(async () => !((await call('list_agent_runs', { status: 'running' })).body.result.runs.length > 0), 30_000)
    const started = await call('create_agent_run', { goal: 'wait for me' })
    expect(started.status).toBe(200)
    const stopped = await call('cancel_agent_run', { run_id: started.body.result.id })
    expect(stopped.status).toBe(200)
    expect(stopped.body.result.status).toBe('stopped')
    const unknown = await call('get_agent_run_steps', { run_id: '00000000-0000-4000-8000-000000000000' })
    expect(unknown).toMatchObject({ status: 404, body: { code: 'not_found' } })
    const other = await call('list_agent_runs', { agent_id: '00000000-0000-4000-8000-000000000000' })
    expect(other).toMatchObject({ status: 404, body: { code: 'not_found' } })
  })
})

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type Api, type TestApp } from './support/app.ts'
import { waitFor } from './support/waitFor.ts'
import { watchStatements } from './support/statementCounter.ts'

const counter = watchStatements()
let app: TestApp
let api: Api
let agentId: string

/** The statements one request sends, with those of the effects it set going, once they are all finished. */
async function statementsOf(tag: string, request: () => Promise<{ status: number }>, expectedStatus = 200): Promise<string[]> {
  counter.tag(tag)
  const res = await request()
  expect(res.status).toBe(expectedStatus)
  await waitFor(async () => {
    const { rows } = await app.services.db.pool.query<{ n: number }>(
      `select count(*)::int as n from effect where actor_id = $1 and status in ('pending', 'prepared', 'sent')`,
      [agentId],
    )
    return rows[0]!.n === 0
  })
  return counter.statements(tag)
}

beforeAll(async () => {
  app = await startTestApp({}, { wrapRequests: counter.wrap })
  ;({ api } = await app.account())
  const created = await api('POST', '/agents', { name: 'counted', model: 'gpt-4o-mini', skills: ['trading'] })
  expect(created.status).toBe(201)
  agentId = created.body.id
  // Warm: the key, the agent's row and its actor are in memory, the statements prepared.
  for (const path of ['start', 'stop', 'start', 'stop']) expect((await api('POST', `/agents/${agentId}/${path}`)).status).toBe(200)
}, 60_000)
afterAll(async () => {
  await app?.close()
  counter.restore()
})

describe('statements per request', () => {
  it('prints', async () => {
    for (let i = 0; i < 2; i++) {
      console.log('GET', await statementsOf(`get${i}`, () => api('GET', `/agents/${agentId}`)))
      console.log('start', await statementsOf(`start${i}`, () => api('POST', `/agents/${agentId}/start`)))
      console.log('stop', await statementsOf(`stop${i}`, () => api('POST', `/agents/${agentId}/stop`)))
    }
  })
})

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type Api, type TestApp } from './support/app.ts'
import { waitFor } from './support/waitFor.ts'
import { watchStatements } from './support/statementCounter.ts'
import { startModelServer, type ModelServer } from './support/modelServer.ts'

/**
 * The statements the hot request paths send, pinned: a change that adds a query to them fails
 * here and must say why (docs/benchmarks.md, "What each request sends"). Counted per request
 * with everything it set going (its commit and the effects run after it), warm: the key, the
 * agent's row and its actor in memory.
 */
const counter = watchStatements()
let app: TestApp
let api: Api
let agentId: string
let model: ModelServer

const openEffects = async () =>
  (await app.services.db.pool.query<{ n: number }>(`select count(*)::int as n from effect where status in ('pending', 'prepared', 'sent')`)).rows[0]!.n

/** The statements one request sends, with those of the effects it set going once they have all finished. */
async function statementsOf(tag: string, request: () => Promise<{ status: number }>): Promise<string[]> {
  counter.tag(tag)
  expect((await request()).status).toBe(200)
  await waitFor(async () => (await openEffects()) === 0)
  return counter.statements(tag)
}

const actorRow = async () => (await app.services.db.pool.query(`select status, version from actor where id = $1`, [agentId])).rows[0]

beforeAll(async () => {
  model = await startModelServer()
  model.mock.onMessage('hello', { content: 'Hi!', usage: { prompt_tokens: 200, completion_tokens: 3 } })
  app = await startTestApp({ OPENAI_BASE_URL: model.baseUrl, OPENAI_API_KEY: 'test-key' }, { wrapRequests: counter.wrap })
  ;({ api } = await app.account())
  const created = await api('POST', '/agents', { name: 'counted', model: 'gpt-4o-mini', skills: ['trading'] })
  expect(created.status).toBe(201)
  agentId = created.body.id
  for (const path of ['start', 'stop']) expect((await api('POST', `/agents/${agentId}/${path}`)).status).toBe(200)
}, 60_000)
afterAll(async () => {
  await app?.close()
  await model?.stop()
  counter.restore()
})

describe('statements per request (warm)', () => {
  it('GET /agents/:id sends none: key, row and status come from memory', async () => {
    expect((await api('GET', `/agents/${agentId}`)).status).toBe(200)
    expect(await statementsOf('get', () => api('GET', `/agents/${agentId}`))).toEqual([])
  })

  it('POST /agents/:id/start sends one: the commit (no run interval, no automation waiting: nothing to check or tell)', async () => {
    const before = await actorRow()
    expect(await statementsOf('start', () => api('POST', `/agents/${agentId}/start`))).toEqual(['actor.commit'])
    expect(await actorRow()).toEqual({ status: 'running', version: String(Number(before.version) + 1) })
  })

  it("POST /agents/:id/stop sends three: the commit, then its effect looks for a run in progress and finishes", async () => {
    const statements = await statementsOf('stop', () => api('POST', `/agents/${agentId}/stop`))
    expect(statements).toHaveLength(3)
    expect(statements[0]).toBe('actor.commit')
    expect(statements[1]).toMatch(/^select id, account_id from actor where kind = \$1 and status in/)
    expect(statements[2]).toBe('effect.finish')
    expect((await actorRow()).status).toBe('stopped')
  })

  it('a one-round chat turn sends four: the turn with its message (the balance checked in it), the history, the credits held, the outcome with its message and charge', async () => {
    expect((await api('POST', `/agents/${agentId}/chat`, { message: 'hello' })).status).toBe(200)
    const statements = await statementsOf('chat', () => api('POST', `/agents/${agentId}/chat`, { message: 'hello' }))
    expect(statements).toEqual([
      // The turn's actor and the user message, in one statement, which also checks that the account
      // covers the first model call's worst case (402 and nothing written otherwise); the agent comes from memory.
      'actor.insert+chat.message.insert?account.covers',
      // The model call: the conversation so far, then the credits it may cost held.
      'chat.message.history', 'credits.reserve',
      // Its outcome: the turn's transition, the answer's message and the charge, in one statement.
      'actor.commit+chat.message.insert+credits.settle.write',
    ])
  })
})

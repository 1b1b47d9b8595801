import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type Api, type TestApp } from './support/app.ts'
import { startReceiver } from './support/webhookReceiver.ts'
import { startModelServer, type ModelServer } from './support/modelServer.ts'
import { waitFor } from './support/waitFor.ts'
import { renderEventsWith } from '../src/app/webhookEvents.ts'
import type { AccountEventRow } from '../src/adapters/db/webhooks.store.ts'

/** run.completed: each run's end reaches a subscribed endpoint with the run as GET /runs/:id shows it; a batch of events reads its runs in one statement. */
let app: TestApp
let api: Api
let model: ModelServer
let receiver: Awaited<ReturnType<typeof startReceiver>>

beforeAll(async () => {
  model = await startModelServer()
  model.mock.onMessage('', { content: 'Done.', usage: { prompt_tokens: 50, completion_tokens: 2 } })
  app = await startTestApp({ WEBHOOK_POLL_MS: '50', OPENAI_BASE_URL: model.baseUrl, OPENAI_API_KEY: 'test-key' })
  ;({ api } = await app.account())
  receiver = await startReceiver()
}, 60_000)
afterAll(async () => {
  await receiver?.close()
  await app?.close()
  await model?.stop()
})

const runEvents = async (runIds: string[]) =>
  (await app.services.pool.query<AccountEventRow>(
    `select seq, id, account_id, type, resource_kind, resource_id, detail, null::jsonb as data, created_at from account_event
      where type = 'run.completed' and resource_id = any($1::text[]) order by seq`, [runIds])).rows

describe('run.completed', () => {
  it('carries each run as GET /runs/:id shows it; a batch renders its runs together, and another account\'s run not at all', async () => {
    const hook = await api('POST', '/webhooks', { url: receiver.url(), events: ['run.completed'] })
    expect(hook.status).toBe(201)
    receiver.trust(hook.body.secret)
    const runIds: string[] = []
    for (const name of ['one', 'two', 'three']) {
      const agent = (await api('POST', '/agents', { name, model: 'gpt-4o-mini', skills: [] })).body
      const run = await api('POST', `/agents/${agent.id}/runs`, { goal: `say done (${name})` })
      expect(run.status).toBe(202)
      runIds.push(run.body.id)
    }
    await waitFor(() => receiver.ofType('run.completed').length === 3, 20_000)
    const viewOf = async (id: string) => {
      const { meta: _meta, ...view } = (await api('GET', `/runs/${id}`)).body
      return view
    }
    for (const id of runIds) {
      const view = await viewOf(id)
      expect(view.status).toBe('completed')
      expect(receiver.ofType('run.completed').find((r) => r.payload.data.id === id)!.payload.data).toEqual(view)
    }

    // The three events rendered as one batch (the runs in one read), in order; the same event
    // claimed for another account renders nothing (its run is not that account's).
    const rows = await runEvents(runIds)
    expect(rows).toHaveLength(3)
    const other = await app.account({ name: 'other' })
    const render = renderEventsWith(app.services.core, { warn: () => {} })
    const data = await render([...rows, { ...rows[0]!, account_id: other.accountId }])
    expect(data.slice(0, 3).map((d) => (d as { id: string }).id)).toEqual(rows.map((r) => r.resource_id))
    for (const [i, d] of data.slice(0, 3).entries()) expect(d).toEqual(await viewOf(rows[i]!.resource_id!))
    expect(data[3]).toBeUndefined()
  }, 60_000)
})

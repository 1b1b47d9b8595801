import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type Api, type TestApp } from './support/app.ts'
import { startModelServer, type ModelServer } from './support/modelServer.ts'
import { waitFor } from './support/waitFor.ts'

/**
 * Operators see the storage: the overview and `/metrics` carry the database's size, its growth
 * over the last hour (from the size sampled a minute by the nodes) and the retention's backlog
 * (ended actors past their window not compacted yet: here a run whose 60 ms window has passed,
 * with the sweep an hour away). Real server.
 */
let model: ModelServer
let app: TestApp
let api: Api
let ops: Api
let opsKey: string

beforeAll(async () => {
  model = await startModelServer()
  model.mock.on({}, { content: 'Nothing to do.', usage: { prompt_tokens: 10, completion_tokens: 3 } })
  app = await startTestApp({ OPENAI_BASE_URL: model.baseUrl, OPENAI_API_KEY: 'test-key', ACTOR_RETENTION_QUIET_MINUTES: '0.001', RETENTION_SWEEP_SECONDS: '3600', LOG_LEVEL: 'error' })
  ;({ api } = await app.account())
  ;({ api: ops, apiKey: opsKey } = await app.account({ operator: true, name: 'ops' }))
})
afterAll(async () => {
  await app?.close()
  await model?.stop()
})

const metric = (text: string, name: string) => {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `))
  return line === undefined ? undefined : Number(line.split(' ')[1])
}

describe('storage in the operator overview and the metrics', () => {
  it('shows the database size, the growth of the last hour and the compaction backlog', async () => {
    const before = (await ops('GET', '/ops/overview')).body.storage
    expect(before.databaseBytes).toBeGreaterThan(1_000_000)
    // No sample an hour old yet: the growth is not known (NaN in the metrics).
    expect(before.growthLastHourBytes).toBeNull()
    const early = await (await fetch(`${app.url}/metrics`, { headers: { authorization: `Bearer ${opsKey}` } })).text()
    expect(metric(early, 'database_growth_last_hour_bytes')).toBeNaN()
    expect(before.compactionBacklog).toBe(0)

    const agent = (await api('POST', '/agents', { name: 'quiet' })).body.id
    const run = (await api('POST', `/agents/${agent}/runs`, { goal: 'look' })).body.id
    await waitFor(async () => (await api('GET', `/runs/${run}`)).body.status === 'completed', 20_000)
    await waitFor(async () => (await ops('GET', '/ops/overview')).body.storage.compactionBacklog === 1, 10_000)

    // A sample of an hour ago, as a node wrote it then: the growth is measured against it.
    await app.services.pool.query(`insert into database_size_sample (at, bytes) values (date_trunc('minute', now()) - interval '61 minutes', 1000000)`)
    const after = (await ops('GET', '/ops/overview')).body.storage
    expect(after.growthLastHourBytes).toBe(after.databaseBytes - 1_000_000)

    const res = await fetch(`${app.url}/metrics`, { headers: { authorization: `Bearer ${opsKey}` } })
    const text = await res.text()
    expect(metric(text, 'actor_compaction_backlog')).toBe(1)
    expect(metric(text, 'database_bytes')).toBeGreaterThan(1_000_000)
    expect(metric(text, 'database_growth_last_hour_bytes')).toBe(metric(text, 'database_bytes')! - 1_000_000)
    // The nodes sample the size once a minute: this minute's sample is there.
    const { rows } = await app.services.pool.query(`select bytes from database_size_sample where at = date_trunc('minute', now()) or at = date_trunc('minute', now()) - interval '1 minute'`)
    expect(rows.length).toBeGreaterThanOrEqual(1)
  })
})

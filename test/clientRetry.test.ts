import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { once } from 'node:events'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ConflictError, createClient, RateLimitError, ServerError, ValidationError } from '../clients/typescript/src/index.ts'

/*
 * The client's retry policy (docs/api.md, Retrying) and its following of event streams, against
 * a server that answers as scripted:
 * which answers are sent again, after how long, and with which Idempotency-Key. (The live
 * service's 409 in progress and lost nodes: test/clientNodeLoss.test.ts.)
 */
type Seen = { method: string; url: string; key: string | undefined; at: number }
let server: Server
let base: string
let seen: Seen[] = []
let script: Array<{ status: number; headers?: Record<string, string>; body: object }> = []

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume()
    if (req.url!.endsWith('/events')) return stream(req, res)
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, key: req.headers['idempotency-key'] as string | undefined, at: Date.now() })
      const next = script.shift() ?? { status: 200, body: { ok: true } }
      res.writeHead(next.status, { 'content-type': 'application/json', ...next.headers }).end(JSON.stringify(next.body))
    })
  }).listen(0, '127.0.0.1')
  await once(server, 'listening')
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`
})
afterAll(() => void server?.close())

/** The streams' script: each connection to an `/events` URL takes the next; `cut` drops the connection after the text. */
let streams: Array<{ text: string; cut: boolean }> = []
const lastEventIds: Array<string | undefined> = []
function stream(req: IncomingMessage, res: ServerResponse) {
  lastEventIds.push(req.headers['last-event-id'] as string | undefined)
  const next = streams.shift() ?? { text: '', cut: false }
  res.writeHead(200, { 'content-type': 'text/event-stream' })
  res.write(next.text)
  if (next.cut) setTimeout(() => res.destroy(), 20)
  else res.end()
}

const alts = () => createClient({ baseUrl: base, apiKey: 'cpk_test' })
const envelope = (code: string, extra: object = {}) => ({ error: code, code, ...extra })
const setUp = (answers: typeof script) => {
  seen = []
  script = answers
}

describe('the retry policy and the following of streams', () => {
  it('a keyed call gets a fresh key of its own, the same on every retry; another call gets another', async () => {
    setUp([
      { status: 409, headers: { 'retry-after': '1' }, body: envelope('idempotency_key_in_progress') },
      { status: 429, headers: { 'retry-after': '1' }, body: envelope('rate_limited') },
      { status: 503, headers: { 'retry-after': '1' }, body: envelope('chain_unavailable') },
      { status: 200, body: { id: 'swap-1', status: 'confirmed' } },
    ])
    const client = alts()
    expect(await client.POST('/swap/execute', { body: {} as never })).toMatchObject({ id: 'swap-1' })
    expect(seen).toHaveLength(4)
    expect(seen[0]!.key).toMatch(/^[0-9a-f-]{36}$/)
    expect(new Set(seen.map((s) => s.key))).toEqual(new Set([seen[0]!.key]))
    // Retry-After honoured: a second at least between attempts.
    for (let i = 1; i < seen.length; i++) expect(seen[i]!.at - seen[i - 1]!.at).toBeGreaterThanOrEqual(950)
    const firstKey = seen[0]!.key
    setUp([])
    await client.POST('/swap/execute', { body: {} as never })
    expect(seen[0]!.key).toMatch(/^[0-9a-f-]{36}$/)
    expect(seen[0]!.key).not.toBe(firstKey)
    setUp([])
    await client.POST('/swap/execute', { body: {} as never, headers: { 'idempotency-key': 'mine-1' } })
    expect(seen.map((s) => s.key)).toEqual(['mine-1'])
  }, 20_000)

  it('not retried: another 409, any other 4xx, a 503 without Retry-After; each a typed error with its code and field_errors', async () => {
    setUp([{ status: 409, headers: { 'retry-after': '2' }, body: envelope('claim_in_progress') }])
    const conflict = await alts().POST('/fees/claim', { body: {} as never }).catch((e: unknown) => e)
    expect(conflict).toBeInstanceOf(ConflictError)
    expect(conflict).toMatchObject({ status: 409, code: 'claim_in_progress', retryAfterMs: 2000 })
    setUp([{ status: 422, headers: { 'x-request-id': 'req-12345678' }, body: envelope('validation_failed', { field_errors: { amountIn: 'Required.' } }) }])
    const invalid = await alts().POST('/swap/execute', { body: {} as never }).catch((e: unknown) => e)
    expect(invalid).toBeInstanceOf(ValidationError)
    expect(invalid).toMatchObject({ code: 'validation_failed', field_errors: { amountIn: 'Required.' }, requestId: 'req-12345678' })
    setUp([{ status: 503, body: envelope('model_provider_not_configured') }])
    expect(await alts().GET('/models').catch((e: unknown) => e)).toBeInstanceOf(ServerError)
    expect(seen).toHaveLength(1)
  })

  it('429 and 503 with Retry-After are retried for any request (nothing was started), as an HTTP date too; past the budget the last answer is the error', async () => {
    setUp([{ status: 429, headers: { 'retry-after': new Date(Date.now() + 1000).toUTCString() }, body: envelope('rate_limited') }])
    expect(await alts().POST('/agents/{id}/start', { params: { path: { id: 'a1' } } })).toMatchObject({ ok: true })
    expect(seen.map((s) => s.key)).toEqual([undefined, undefined])
    setUp(Array.from({ length: 5 }, () => ({ status: 429, headers: { 'retry-after': '1' }, body: envelope('rate_limited') })))
    const client = createClient({ baseUrl: base, retry: { budgetMs: 1500 } })
    expect(await client.GET('/models').catch((e: unknown) => e)).toBeInstanceOf(RateLimitError)
    expect(seen).toHaveLength(2)
    script = []
  }, 20_000)

  it('a followed stream cut before its end is resumed with Last-Event-ID; one that ends without a final state is read, then resumed; CRLF and multi-line data parse', async () => {
    const swap = (id: number, status: string) => `id: ${id}\r\nevent: status\r\ndata: {"id":"s1",\r\ndata: "status":"${status}"}\r\n\r\n`
    streams = [
      { text: `: keep-alive\n\n${swap(3, 'submitting')}`, cut: true },
      { text: swap(5, 'confirming'), cut: false },
      { text: swap(7, 'confirmed'), cut: false },
    ]
    lastEventIds.length = 0
    setUp([{ status: 200, body: { id: 's1', status: 'confirming' } }, { status: 200, body: { id: 's1', status: 'confirming' } }])
    const events = []
    const follow = alts().follow.swap('s1')
    for (;;) {
      const next = await follow.next()
      if (next.done) {
        expect(next.value).toMatchObject({ id: 's1', status: 'confirmed' })
        break
      }
      events.push([next.value.id, next.value.status])
    }
    expect(events).toEqual([['3', 'submitting'], ['5', 'confirming'], ['7', 'confirmed']])
    expect(lastEventIds).toEqual([undefined, '3', '5'])
    // Between the streams, the swap read (it had not ended).
    expect(seen.map((s) => `${s.method} ${s.url}`)).toEqual(['GET /api/v1/swap/s1', 'GET /api/v1/swap/s1'])
  })

  it('a follow resumed after the final event ends with the resource read, not a wait', async () => {
    streams = [{ text: '', cut: false }]
    setUp([{ status: 200, body: { id: 's2', status: 'failed' } }])
    const client = alts()
    expect(await client.end(client.follow.swap('s2', { lastEventId: '9' }))).toMatchObject({ status: 'failed' })
  })
})

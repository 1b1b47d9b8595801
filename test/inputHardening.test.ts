import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib'
import { randomUUID } from 'node:crypto'
import { apiClient, startTestApp, type Api, type TestApp, rawHttp } from './support/app.ts'
import { callTool } from '../src/tools/callTool.ts'
import { findTool } from '../src/tools/registry.ts'

let app: TestApp
let alice: { accountId: string; apiKey: string; api: Api }
let operator: { accountId: string; apiKey: string; api: Api }
let agentId: string

beforeAll(async () => {
  app = await startTestApp()
  alice = await app.account({ name: 'alice' })
  operator = await app.account({ name: 'ops', operator: true })
  const res = await alice.api('POST', '/agents', { name: 'bot', model: 'gpt-4o-mini', skills: [] })
  expect(res.status).toBe(201)
  agentId = res.body.id
})
afterAll(async () => {
  await app?.close()
})

/** A request with a raw body and headers of our choosing; the answer parsed as JSON. */
async function send(method: string, path: string, body: Buffer | string | undefined, headers: Record<string, string> = {}, apiKey = alice.apiKey) {
  const res = await fetch(`${app.url}/api/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', ...headers },
    ...(body !== undefined ? { body } : {}),
  })
  const text = await res.text()
  expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/)
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined }
}

const agentBody = (name: string) => JSON.stringify({ name, model: 'gpt-4o-mini', skills: [] })

describe('Content-Encoding', () => {
  it('gzip, deflate and br bodies are decoded (names case-insensitive, identity ignored)', async () => {
    for (const [coding, encode] of [['gzip', gzipSync], ['deflate', deflateSync], ['br', brotliCompressSync], ['GZIP, identity', gzipSync]] as const) {
      const res = await send('POST', '/agents', encode(agentBody(`enc-${coding}`)), { 'content-encoding': coding })
      expect({ coding, status: res.status, name: res.body.name }).toEqual({ coding, status: 201, name: `enc-${coding}` })
    }
  })

  it('an encoding not supported is 415 unsupported_encoding; a body that does not decode is 400 invalid_body_encoding, on every body route', async () => {
    for (const coding of ['compress', 'zstd', 'gzip, br', 'x-unknown']) {
      const res = await send('POST', '/agents', gzipSync(agentBody('x')), { 'content-encoding': coding })
      expect({ coding, status: res.status, code: res.body.code }).toEqual({ coding, status: 415, code: 'unsupported_encoding' })
    }
    const routes: Array<[string, string, string?]> = [
      ['POST', '/agents'],
      ['PATCH', `/agents/${agentId}`],
      ['POST', `/agents/${agentId}/whitelist`],
      ['DELETE', `/agents/${agentId}/whitelist`],
      ['POST', '/keys'],
      ['POST', '/me'],
      ['POST', '/auth/siwe'],
      ['POST', `/ops/tokens/0x${'1'.repeat(40)}/verified`, operator.apiKey],
    ]
    const garbage = Buffer.from('this is not compressed at all, just bytes')
    for (const [method, path, key] of routes) {
      for (const coding of ['gzip', 'deflate', 'br']) {
        const res = await send(method, path, garbage, { 'content-encoding': coding }, key)
        expect({ path, coding, status: res.status, code: res.body.code }).toEqual({ path, coding, status: 400, code: 'invalid_body_encoding' })
      }
    }
    // A gzip stream cut short is not a body either.
    const cut = gzipSync(agentBody('cut')).subarray(0, 20)
    expect((await send('POST', '/agents', cut, { 'content-encoding': 'gzip' })).body.code).toBe('invalid_body_encoding')
  })

  it('a decompression bomb stops at the 1 MB limit with 413, and the service goes on', async () => {
    // 16 MB of JSON that compresses to about 16 KB.
    const bomb = gzipSync(Buffer.concat([Buffer.from('{"name":"'), Buffer.alloc(16 * 1024 * 1024, 'a'), Buffer.from('"}')]))
    expect(bomb.length).toBeLessThan(100_000)
    for (const [coding, body] of [['gzip', bomb], ['br', brotliCompressSync(Buffer.alloc(16 * 1024 * 1024, ' '))]] as const) {
      const res = await send('POST', '/agents', body, { 'content-encoding': coding })
      expect({ coding, status: res.status, code: res.body.code }).toEqual({ coding, status: 413, code: 'payload_too_large' })
    }
    // A compressed body declared larger than the limit is refused before it is read.
    const declared = await send('POST', '/agents', Buffer.alloc(1_100_000, 1), { 'content-encoding': 'gzip' })
    expect(declared.status).toBe(413)
    expect((await alice.api('GET', '/me')).status).toBe(200)
  })
})

describe('JSON depth', () => {
  it('a body nested 5,000 levels is a 422 before anything walks it (idempotency fingerprint included); 32 levels are parsed', async () => {
    const deep = `{"name":"x","model":"gpt-4o-mini","skills":[],"deep":${'['.repeat(5000)}${']'.repeat(5000)}}`
    for (const headers of [{}, { 'idempotency-key': randomUUID() }] as Array<Record<string, string>>) {
      const res = await send('POST', '/agents', deep, headers)
      expect(res.status).toBe(422)
      expect(res.body).toMatchObject({ code: 'validation_failed', field_errors: { body: 'Nested deeper than 32 levels.' } })
    }
    // 32 levels in all (the body object is the first): an ordinary unknown field.
    const ok = await send('POST', '/agents', `{"name":"x","model":"gpt-4o-mini","skills":[],"deep":${'['.repeat(31)}${']'.repeat(31)}}`)
    expect(ok.status).toBe(422)
    expect(ok.body.field_errors).toEqual({ deep: 'Unknown field.' })
    const over = await send('POST', '/agents', `{"deep":${'['.repeat(32)}${']'.repeat(32)}}`)
    expect(over.body.field_errors).toEqual({ body: 'Nested deeper than 32 levels.' })
  })
})

describe('cursors', () => {
  // Signed with the service's own key: what is checked here is the date behind the signature.
  const cursor = (ts: string) => app.services.core.cursors.seal(Buffer.from(JSON.stringify([ts, randomUUID()])).toString('base64url'))
  const forged = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url')
  const fieldsOf = (res: { body: { field_errors?: object } }) => Object.keys(res.body.field_errors ?? {})

  it('a cursor the service did not issue is a 422 naming cursor on every paged route', async () => {
    const token = `0x${'1'.repeat(40)}`
    const cases: Array<[Api, string, string]> = [
      [alice.api, '/tokens', encodeURIComponent(Buffer.from(JSON.stringify([9007199254740991, 'x'])).toString('base64'))],
      [alice.api, '/leaderboard', 'WzEwMDAwMDBd'],
      [alice.api, `/agents/${agentId}/transactions`, Buffer.from(randomUUID()).toString('base64url')],
      [operator.api, '/ops/actors', Buffer.from(`agent:${agentId}`).toString('base64url')],
      [operator.api, '/ops/audit', Buffer.from('1').toString('base64url')],
      [alice.api, '/agents', forged(['2026-01-01T00:00:00Z', randomUUID()])],
      [alice.api, '/keys', forged(['2026-01-01T00:00:00Z', randomUUID()])],
      [alice.api, '/billing/transactions', forged(['2026-01-01T00:00:00Z', randomUUID()])],
      [alice.api, `/agents/${agentId}/audit`, Buffer.from('1').toString('base64url')],
      [alice.api, `/agents/${agentId}/runs`, forged(['2026-01-01T00:00:00.000Z', randomUUID()])],
      [alice.api, '/skills/registry', forged(['2026-01-01T00:00:00Z', randomUUID()])],
      [alice.api, '/skills/custom', forged(['2026-01-01T00:00:00Z', randomUUID()])],
      [alice.api, `/tokens/${token}/trades`, forged([1, 0])],
    ]
    for (const [api, path, value] of cases) {
      for (const c of [value, `${value}.${'A'.repeat(22)}`, '', 'x'.repeat(600)]) {
        const res = await api('GET', `${path}?cursor=${c}`)
        expect({ path, c: c.slice(0, 40), status: res.status, code: res.body.code, fields: fieldsOf(res) }).toEqual({
          path, c: c.slice(0, 40), status: 422, code: 'validation_failed', fields: ['cursor'],
        })
      }
    }
  })

  it('a cursor the service issued still pages, on the API and through a tool; altered by one character it is refused', async () => {
    for (const name of ['page-a', 'page-b']) expect((await alice.api('POST', '/agents', { name, model: 'gpt-4o-mini', skills: [] })).status).toBe(201)
    const all = (await alice.api('GET', '/agents?limit=100')).body.agents.map((a: { id: string }) => a.id)
    const p1 = await alice.api('GET', '/agents?limit=1')
    expect(p1.body.nextCursor).toEqual(expect.any(String))
    const p2 = await alice.api('GET', `/agents?limit=1&cursor=${p1.body.nextCursor}`)
    expect({ status: p2.status, ids: p2.body.agents.map((a: { id: string }) => a.id) }).toEqual({ status: 200, ids: [all[1]] })
    const actors1 = await operator.api('GET', '/ops/actors?limit=1')
    const actors2 = await operator.api('GET', `/ops/actors?limit=1&cursor=${actors1.body.nextCursor}`)
    expect(actors2.status).toBe(200)
    expect(actors2.body.actors[0].id > actors1.body.actors[0].id).toBe(true)
    const cursor: string = p1.body.nextCursor
    for (const altered of [`${cursor.slice(0, 3)}${cursor[3] === 'A' ? 'B' : 'A'}${cursor.slice(4)}`, `${cursor.slice(0, -1)}${cursor.endsWith('A') ? 'B' : 'A'}`]) {
      expect(fieldsOf(await alice.api('GET', `/agents?limit=1&cursor=${altered}`))).toEqual(['cursor'])
    }
    // The same cursors through a tool (an MCP client's or a model's front door).
    const tool = (args: unknown) => callTool(findTool('list_agents')!, args, { core: app.services.core, accountId: alice.accountId, agent: 'choose', callId: 'c' })
    const t1 = (await tool({ limit: 1 })) as { ok: true; result: { nextCursor: string } }
    expect(await tool({ limit: 1, cursor: t1.result.nextCursor })).toMatchObject({ ok: true, result: { agents: [{ id: all[1] }] } })
    expect(await tool({ limit: 1, cursor: p1.body.nextCursor })).toMatchObject({ ok: true, result: { agents: [{ id: all[1] }] } })
    expect(await tool({ cursor: forged(['2026-01-01T00:00:00Z', randomUUID()]) })).toMatchObject({ ok: false, status: 422, error: { fieldErrors: { cursor: 'Invalid cursor.' } } })
  })

  it('a signed cursor whose date JavaScript takes and PostgreSQL refuses is a 422 on /agents and /keys', async () => {
    for (const ts of ['2026-02-30T00:00:00.000Z', '0000-01-01T00:00:00Z', '2025-02-29T00:00:00Z', '2026-04-31 10:00:00+00', '2026-01-01T24:00:00Z', '2026-01-01T00:00:00+16:00']) {
      for (const path of ['/agents', '/keys']) {
        const res = await alice.api('GET', `${path}?cursor=${cursor(ts)}`)
        expect({ ts, path, status: res.status, code: res.body.code, field: Object.keys(res.body.field_errors ?? {}) }).toEqual({
          ts, path, status: 422, code: 'validation_failed', field: ['cursor'],
        })
      }
    }
    for (const ts of ['2024-02-29T00:00:00.123456Z', '2026-11-23 11:00:00.5+01']) {
      const res = await alice.api('GET', `/agents?cursor=${cursor(ts)}`)
      expect(res.status).toBe(200)
    }
  })
})

describe('field names', () => {
  it('a field named like an Object.prototype member is an unknown field like any other, in bodies and queries', async () => {
    const names = ['constructor', 'toString', '__proto__', 'hasOwnProperty', 'valueOf']
    for (const name of names) {
      const res = await send('POST', '/agents', `{"name":"x","model":"gpt-4o-mini","skills":[],${JSON.stringify(name)}:{"polluted":true}}`)
      expect({ name, status: res.status, field_errors: res.body.field_errors }).toEqual({ name, status: 422, field_errors: { [name]: 'Unknown field.' } })
      const q = await alice.api('GET', `/agents?${name}=1`)
      expect({ name, status: q.status, field_errors: q.body.field_errors }).toEqual({ name, status: 422, field_errors: { [name]: 'Unknown field.' } })
    }
    const policy = await send('PATCH', `/agents/${agentId}`, '{"policy":{"__proto__":{"paused":true},"constructor":1}}')
    expect(policy.status).toBe(422)
    expect(policy.body.field_errors).toEqual({ 'policy.__proto__': 'Unknown field.', 'policy.constructor': 'Unknown field.' })
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
  })
})

describe('commands that take no body', () => {
  it('POST /runs/:id/stop, POST /auth/logout and DELETE /keys/:id refuse any field (constructor, 5,000 extra keys) with 422, as every other command does', async () => {
    const many = JSON.stringify(Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`k${i}`, i])))
    const routes: Array<[string, string]> = [['POST', `/runs/${randomUUID()}/stop`], ['POST', '/auth/logout'], ['DELETE', `/keys/${randomUUID()}`]]
    for (const [method, path] of routes) {
      const ctor = await send(method, path, '{"constructor":{"polluted":true}}')
      expect({ path, status: ctor.status, code: ctor.body.code, field_errors: ctor.body.field_errors }).toEqual({
        path, status: 422, code: 'validation_failed', field_errors: { constructor: 'Unknown field.' },
      })
      const extra = await send(method, path, many)
      expect({ path, status: extra.status, code: extra.body.code, fields: Object.keys(extra.body.field_errors ?? {}).length }).toEqual({
        path, status: 422, code: 'validation_failed', fields: 5000,
      })
      expect((await send(method, path, '[1]')).status).toBe(422)
    }
    // Without a body (or with {}) each goes on as before: an unknown run or key is a 404, logout is a 200.
    for (const body of [undefined, '{}']) {
      expect((await send('POST', `/runs/${randomUUID()}/stop`, body)).status).toBe(404)
      expect((await send('DELETE', `/keys/${randomUUID()}`, body)).status).toBe(404)
      expect((await send('POST', '/auth/logout', body)).body).toMatchObject({ ok: true })
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
  })
})

describe('path parameters', () => {
  it('%00 in a path parameter is a 422, never a failed query', async () => {
    const cases: Array<[string, string, Api]> = [
      ['GET', '/ops/actors/%00', operator.api],
      ['GET', '/ops/actors/agent%00x', operator.api],
      ['GET', `/agents/${agentId}%00`, alice.api],
      ['DELETE', '/keys/%00', alice.api],
      ['GET', '/tokens/%00', alice.api],
    ]
    for (const [method, path, api] of cases) {
      const res = await api(method, path)
      expect({ path, status: res.status, code: res.body.code, field_errors: res.body.field_errors }).toEqual({
        path, status: 422, code: 'validation_failed', field_errors: { path: 'Must not contain NUL (\\u0000) characters.' },
      })
    }
  })
})

/** Sends raw bytes and parses the answer's status line, headers and JSON body. */
async function rawRequest(bytes: string): Promise<{ status: number; headers: Record<string, string>; body: any }> {
  const data = await rawHttp(app.url, bytes)
  const [head, body] = data.split('\r\n\r\n') as [string, string]
  const [statusLine, ...lines] = head.split('\r\n')
  const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]))
  return { status: Number(statusLine!.split(' ')[1]), headers, body: body ? JSON.parse(body) : undefined }
}

describe("requests Node's HTTP parser refuses", () => {
  it('a bad method, a malformed request line and oversized headers are answered in the envelope with X-Request-Id', async () => {
    const cases: Array<[string, number, string]> = [
      ['BREW /api/v1/health HTTP/1.1\r\nHost: x\r\n\r\n', 400, 'bad_request'],
      ['GET /api/v1/health HTTP/9.9\r\nHost: x\r\n\r\n', 400, 'bad_request'],
      ['GET\r\n\r\n', 400, 'bad_request'],
      ['GET /api/v1/health HTTP/1.1\r\nHost: x\r\nBad Header: y\r\n\r\n', 400, 'bad_request'],
      [`GET /api/v1/health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, 431, 'headers_too_large'],
    ]
    for (const [bytes, status, code] of cases) {
      const res = await rawRequest(bytes)
      expect({ line: bytes.slice(0, 24), status: res.status, code: res.body?.code, error: typeof res.body?.error }).toEqual({
        line: bytes.slice(0, 24), status, code, error: 'string',
      })
      expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/)
      expect(res.headers['content-type']).toMatch(/^application\/json/)
    }
    expect((await apiClient(`${app.url}/api/v1`)('GET', '/health')).status).toBe(200)
  })
})

describe('smaller contract points', () => {
  it('limit takes plain decimal integers only', async () => {
    for (const limit of ['0x10', '1e2', '+5', '5.0', ' 5', '0', '101', '']) {
      const res = await alice.api('GET', `/agents?limit=${encodeURIComponent(limit)}`)
      expect({ limit, status: res.status, field: Object.keys(res.body.field_errors ?? {}) }).toEqual({ limit, status: 422, field: ['limit'] })
    }
    const ops = await operator.api('GET', '/ops/actors?limit=1e2')
    expect(ops.status).toBe(422)
    expect((await alice.api('GET', '/agents?limit=16')).status).toBe(200)
    expect((await apiClient(`${app.url}/api/v1`)('GET', '/tokens?limit=0x10')).status).toBe(422)
  })

  it('names are counted in characters (Unicode code points), as the docs say', async () => {
    const forty = '😀'.repeat(40)
    const created = await alice.api('POST', '/agents', { name: forty, model: 'gpt-4o-mini', skills: [] })
    expect(created.status).toBe(201)
    expect(created.body.name).toBe(forty)
    const tooLong = await alice.api('POST', '/agents', { name: '😀'.repeat(65), model: 'gpt-4o-mini', skills: [] })
    expect(tooLong.status).toBe(422)
    expect(tooLong.body.field_errors).toEqual({ name: 'At most 64 characters.' })
    expect((await alice.api('POST', '/me', { name: '🚀'.repeat(64) })).status).toBe(200)
    expect((await alice.api('POST', '/keys', { name: '🔑'.repeat(64), scopes: ['read'] })).status).toBe(201)
  })

  it('openapi.json documents every route, the verified body and the ?address= of a whitelist delete', async () => {
    const doc = (await apiClient(`${app.url}/api/v1`)('GET', '/openapi.json')).body
    expect(doc.paths['/ops/tokens/{address}/verified'].post.requestBody.content['application/json'].schema).toMatchObject({
      type: 'object', properties: { verified: { type: 'boolean' } }, required: ['verified'],
    })
    const del = doc.paths['/agents/{id}/whitelist'].delete
    expect(del.parameters).toContainEqual(expect.objectContaining({ name: 'address', in: 'query', required: false }))
    expect(del.requestBody.required).toBe(false)
    expect(doc.paths['/ops/actors/counts'].get['x-scope']).toBe('operator')
    expect(doc.paths['/metrics'].get.servers).toEqual([{ url: '/' }])
    expect(doc.paths['/openapi.json'].get.security).toEqual([])
    expect(doc.paths['/agents'].post.requestBody.content['application/json'].schema.properties.name).toMatchObject({ minLength: 1, maxLength: 64 })
  })

  // Last: it exhausts this IP's budget of failed authentications for the window.
  it('the 429 of the per-IP limit on failed authentications carries RateLimit and RateLimit-Policy', async () => {
    const bad = apiClient(`${app.url}/api/v1`, `cpk_${'x'.repeat(38)}`)
    let last = await bad('GET', '/me')
    for (let i = 0; i < 70 && last.status !== 429; i++) last = await bad('GET', '/me')
    expect(last.status).toBe(429)
    expect(last.body.code).toBe('rate_limited')
    expect(Number(last.headers.get('retry-after'))).toBeGreaterThan(0)
    expect(last.headers.get('ratelimit-policy')).toMatch(/"authfail";q=60;w=\d+/)
    expect(last.headers.get('ratelimit')).toMatch(/"authfail";r=0;t=\d+/)
  })
})

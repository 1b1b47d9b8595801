import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { brotliCompressSync as brotliMax, constants, deflateSync, gzipSync } from 'node:zlib'
import fc from 'fast-check'
import { startTestApp, type TestApp, rawHttp } from './support/app.ts'
import { startModelServer, type ModelServer } from './support/modelServer.ts'
import { cursorArb, NASTY_KEYS, NASTY_STRINGS, operationsOf, valueOf, type JsonSchema, type Operation } from './support/openapiArbitraries.ts'

/**
 * Schema-driven fuzzing: every operation of the served OpenAPI document gets fixed hostile
 * inputs (the classes that once reached a 500) and seeded random ones, mutated bodies, queries,
 * path parameters and headers. No answer may be a 5xx or fall outside the envelope.
 * Replay a failure with FUZZ_SEED=<seed printed> npx vitest run test/fuzz.test.ts.
 */
/** Brotli at a low quality: the default (11) is slow and the server decodes either alike. */
const brotliCompressSync = (b: string | Buffer) => brotliMax(b, { params: { [constants.BROTLI_PARAM_QUALITY]: 4 } })
// A fixed seed unless one is asked for: the suite runs the same cases every time (FUZZ_SEED=random draws one).
const SEED = process.env.FUZZ_SEED === 'random' ? Math.floor(Math.random() * 2 ** 31) : Number(process.env.FUZZ_SEED ?? 20261207)
const RANDOM_CASES = 400
/** Random cases stop being sent after this, whatever is left: the test stays bounded on a loaded machine. */
const RANDOM_BUDGET_MS = 12_000
const CONCURRENCY = 6

type Auth = 'user' | 'operator' | 'read' | 'none' | 'bad'
type Case = { label: string; method: string; url: string; auth: Auth; headers: Record<string, string>; body?: Buffer | string | undefined }
type Outcome = { c: Case; status: number; problem: string; body: string }

let app: TestApp
const keys: Record<Auth, string | undefined> = { user: undefined, operator: undefined, read: undefined, none: undefined, bad: `cpk_${'Z'.repeat(38)}` }
const known = { uuids: [] as string[] }
let ops: Operation[] = []
/** The model provider of the app (answering every chat at once), so a valid chat is not a 503. */
let model: ModelServer

beforeAll(async () => {
  model = await startModelServer()
  model.mock.on({ endpoint: 'chat', predicate: () => true }, () => ({ content: 'fuzzed', usage: { prompt_tokens: 10, completion_tokens: 1 } }))
  app = await startTestApp({ RATE_LIMIT_PER_IP: '1000000', RATE_LIMIT_PER_KEY: '1000000', OPENAI_BASE_URL: model.baseUrl, OPENAI_API_KEY: 'fuzz' }, { withChain: true })
  const user = await app.account({ name: 'fuzz' })
  keys.user = user.apiKey
  keys.operator = (await app.account({ name: 'fuzz-ops', operator: true })).apiKey
  const agent = await user.api('POST', '/agents', { name: 'target', model: 'gpt-4o-mini', skills: [] })
  const readKey = await user.api('POST', '/keys', { name: 'reader', scopes: ['read'] })
  keys.read = readKey.body.key
  known.uuids.push(agent.body.id, readKey.body.id)
  const doc = await (await fetch(`${app.url}/api/v1/openapi.json`)).json()
  ops = operationsOf(doc as Parameters<typeof operationsOf>[0])
}, 120_000)
afterAll(async () => {
  await app?.close()
  await model?.stop()
})

const hasBody = (op: Operation) => op.body !== undefined && op.method !== 'GET'
const authFor = (op: Operation): Auth => (op.scope === 'operator' ? 'operator' : 'user')
const fillPath = (op: Operation, value: (name: string) => string) => op.path.replace(/\{(\w+)\}/g, (_m, name: string) => value(name))
const realParam = (name: string) => (name === 'address' ? `0x${'1'.repeat(40)}` : known.uuids[0]!)
const sampleBody = (op: Operation, seed: number) => fc.sample(valueOf(op.body, known), { seed, numRuns: 1 })[0]

/** The seven input classes that reached a 500 once, on every operation they apply to. */
function fixedCases(): Case[] {
  const out: Case[] = []
  const bomb = gzipSync(Buffer.alloc(4 * 1024 * 1024, '['))
  const json = { 'content-type': 'application/json' }
  for (const op of ops) {
    const url = `${op.base}${fillPath(op, realParam)}`
    const base = { method: op.method, url, auth: authFor(op) }
    if (hasBody(op)) {
      const body = JSON.stringify(sampleBody(op, SEED) ?? {})
      out.push(
        { ...base, label: 'gzip that does not decode', headers: { ...json, 'content-encoding': 'gzip' }, body: 'not gzip at all' },
        { ...base, label: 'deflate that does not decode', headers: { ...json, 'content-encoding': 'deflate' }, body: Buffer.from([1, 2, 3, 4]) },
        { ...base, label: 'br body', headers: { ...json, 'content-encoding': 'br' }, body: brotliCompressSync(body) },
        { ...base, label: 'gzip body', headers: { ...json, 'content-encoding': 'gzip' }, body: gzipSync(body) },
        { ...base, label: 'unsupported encoding', headers: { ...json, 'content-encoding': 'compress' }, body },
        { ...base, label: 'gzip bomb', headers: { ...json, 'content-encoding': 'gzip' }, body: bomb },
        { ...base, label: 'JSON 5,000 deep', headers: { ...json, 'idempotency-key': `fuzz-deep-${op.path}` }, body: `{"a":${'['.repeat(5000)}${']'.repeat(5000)}}` },
        ...['constructor', 'toString', '__proto__'].map((k) => ({ ...base, label: `field ${k}`, headers: json, body: `{${JSON.stringify(k)}:1,${body.slice(1)}` })),
        { ...base, label: '40-emoji strings', headers: json, body: JSON.stringify(body === '{}' ? {} : JSON.parse(body), (_k, v) => (typeof v === 'string' ? '😀'.repeat(40) : v)) },
      )
    }
    for (const p of op.pathParams) out.push({ ...base, label: `%00 in {${p}}`, url: `${op.base}${fillPath(op, (n) => (n === p ? `x%00${realParam(n)}` : realParam(n)))}`, headers: {} })
    if ('cursor' in op.query) {
      for (const ts of ['2026-02-30T00:00:00Z', '0000-01-01T00:00:00Z']) {
        out.push({ ...base, label: `cursor ${ts}`, url: `${url}?cursor=${Buffer.from(JSON.stringify([ts, known.uuids[0]])).toString('base64url')}`, headers: {} })
      }
    }
    if ('limit' in op.query) for (const l of ['0x10', '1e2']) out.push({ ...base, label: `limit=${l}`, url: `${url}?limit=${l}`, headers: {} })
  }
  return out
}

/** encodeURIComponent, after turning lone surrogates (which it refuses) into U+FFFD. */
const enc = (s: string) => encodeURIComponent(Buffer.from(s).toString())
// Printable ASCII only: fetch itself refuses control characters (the raw-socket case sends them).
const asciiHeader = fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 300 })

/** A random case for an operation: schema-shaped values, then one or more mutations. */
function randomCase(op: Operation): fc.Arbitrary<Case> {
  const param = fc.oneof(
    { arbitrary: fc.constantFrom(...known.uuids, `0x${'1'.repeat(40)}`).map(enc), weight: 3 },
    { arbitrary: fc.uuid().map(enc), weight: 2 },
    { arbitrary: fc.constantFrom(...NASTY_STRINGS).map(enc), weight: 2 },
    { arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 60 }).map(enc), weight: 2 },
    { arbitrary: fc.constantFrom('%00', '%zz', '%E0%A4%A', '..', '%2F'), weight: 1 },
  )
  const queryValue = (name: string, s: JsonSchema) =>
    fc.oneof(
      valueOf(s, known).map((v) => (typeof v === 'string' ? v : JSON.stringify(v))),
      fc.constantFrom(...NASTY_STRINGS),
      ...(name === 'cursor' ? [cursorArb] : []),
    )
  const knownQuery = fc.record(Object.fromEntries(Object.entries(op.query).map(([n, s]) => [n, queryValue(n, s)])), { requiredKeys: [] })
  const query = fc
    .tuple(knownQuery, fc.option(fc.tuple(fc.oneof(fc.constantFrom(...NASTY_KEYS), fc.string({ maxLength: 12 })), fc.string({ maxLength: 20 }))), fc.boolean())
    .map(([q, extra, repeat]) => {
      const pairs = Object.entries(q as Record<string, string>)
      if (extra) pairs.push(extra)
      if (repeat && pairs[0]) pairs.push(pairs[0])
      return pairs.length ? `?${pairs.map(([k, v]) => `${enc(k)}=${enc(v)}`).join('&')}` : ''
    })
  const shaped = valueOf(op.body, known)
  const body: fc.Arbitrary<string | undefined> = !hasBody(op)
    ? fc.constant(undefined)
    : fc.oneof(
        { arbitrary: shaped.map((v) => JSON.stringify(v)), weight: 4 },
        { arbitrary: fc.tuple(shaped, fc.oneof(fc.constantFrom(...NASTY_STRINGS), fc.jsonValue({ maxDepth: 3 }))).map(([v, bad]) => JSON.stringify(replaceOne(v, bad))), weight: 4 },
        { arbitrary: fc.tuple(shaped, fc.oneof(fc.constantFrom(...NASTY_KEYS), fc.string({ maxLength: 10 })), fc.jsonValue({ maxDepth: 2 })).map(([v, k, x]) => withKey(v, k, x)), weight: 3 },
        { arbitrary: fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)), weight: 1 },
        { arbitrary: fc.integer({ min: 20, max: 8000 }).map((n) => `{"x":${'{"y":'.repeat(n)}1${'}'.repeat(n)}}`), weight: 1 },
        { arbitrary: fc.string({ unit: 'binary', maxLength: 200 }), weight: 1 },
      )
  const encoding = fc.oneof(
    { arbitrary: fc.constant(undefined), weight: 8 },
    { arbitrary: fc.constantFrom('gzip', 'deflate', 'br', 'GZip', 'x-gzip', 'identity', 'zstd', 'gzip, gzip', ''), weight: 2 },
  )
  const headers = fc.record(
    {
      'idempotency-key': fc.oneof(fc.uuid(), asciiHeader, fc.constant('"quoted \\" key"')),
      'x-request-id': asciiHeader,
      'content-type': fc.constantFrom('application/json', 'text/plain', 'application/x-www-form-urlencoded', 'application/json; charset=latin1', ''),
    },
    { requiredKeys: [] },
  )
  const method = fc.oneof({ arbitrary: fc.constant(op.method), weight: 12 }, { arbitrary: fc.constantFrom('PUT', 'OPTIONS', 'HEAD', 'DELETE', 'POST'), weight: 1 })
  const auth = fc.oneof({ arbitrary: fc.constant(authFor(op)), weight: 10 }, { arbitrary: fc.constantFrom<Auth>('none', 'bad', 'read', 'user'), weight: 2 })
  return fc
    .record({ path: fc.array(param, { minLength: op.pathParams.length, maxLength: op.pathParams.length }), query, body, encoding, headers, method, auth })
    .map((r) => {
      let i = 0
      const url = `${op.base}${op.path.replace(/\{\w+\}/g, () => r.path[i++]!)}${r.query}`
      const sendsBody = r.body !== undefined && r.method !== 'GET' && r.method !== 'HEAD'
      const payload = sendsBody ? encode(r.body!, r.encoding) : undefined
      const hs: Record<string, string> = { ...(r.headers as Record<string, string>), ...(sendsBody && r.encoding !== undefined ? { 'content-encoding': r.encoding } : {}) }
      return { label: `random ${op.method} ${op.path}`, method: r.method, url, auth: r.auth, headers: hs, body: payload }
    })
}

function encode(body: string, encoding: string | undefined): Buffer | string {
  const e = encoding?.toLowerCase()
  if (e === 'gzip' || e === 'x-gzip') return gzipSync(body)
  if (e === 'deflate') return deflateSync(body)
  if (e === 'br') return brotliCompressSync(body)
  return body
}

function replaceOne(v: unknown, bad: unknown): unknown {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return bad
  const keys = Object.keys(v)
  if (keys.length === 0) return { x: bad }
  return { ...v, [keys[bad === null ? 0 : keys.length - 1]!]: bad }
}

function withKey(v: unknown, key: string, x: unknown): string {
  const obj = v !== null && typeof v === 'object' && !Array.isArray(v) ? JSON.stringify(v).slice(1, -1) : ''
  return `{${JSON.stringify(key)}:${JSON.stringify(x)}${obj ? `,${obj}` : ''}}`
}

/** Sends one case; returns what is wrong with the answer, if anything. */
async function run(c: Case): Promise<Outcome | undefined> {
  const key = keys[c.auth]
  const send = () =>
    fetch(`${app.url}${c.url}`, {
      method: c.method,
      headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...c.headers },
      ...(c.body !== undefined ? { body: c.body } : {}),
      signal: AbortSignal.timeout(30_000),
    })
  let res: Response
  try {
    // Once more on a socket the server closed as idle just as it was reused (a keep-alive race, not an answer).
    res = await send().catch((err) => (['UND_ERR_SOCKET', 'ECONNRESET'].includes((err as { cause?: { code?: string } }).cause?.code ?? '') ? send() : Promise.reject(err)))
  } catch (err) {
    return { c, status: 0, problem: `request failed: ${(err as Error).message} ${(err as { cause?: Error }).cause?.message ?? ''}`, body: '' }
  }
  // An actor's event stream (`.../:id/events`) stays open until the actor's final state, which a
  // fuzzed agent or run may never reach: its answer is the 200 and the stream's content type.
  if (res.status === 200 && (res.headers.get('content-type') ?? '').startsWith('text/event-stream') && /\/events(\?|$)/.test(c.url)) {
    await res.body?.cancel()
    return res.headers.get('x-request-id') ? undefined : { c, status: res.status, problem: 'no X-Request-Id', body: '' }
  }
  const text = await res.text()
  const fail = (problem: string) => ({ c, status: res.status, problem, body: text.slice(0, 200) })
  const requestId = res.headers.get('x-request-id')
  if (res.status >= 500) return fail('5xx')
  if (!requestId || !/^[A-Za-z0-9._:-]{8,128}$/.test(requestId)) return fail('no X-Request-Id')
  if (res.status === 429 && !(res.headers.get('ratelimit') && res.headers.get('ratelimit-policy'))) return fail('429 without RateLimit headers')
  if (c.method === 'HEAD' || c.url.startsWith('/metrics')) return undefined
  // A streamed chat answers Server-Sent Events, which end with `done` or `error`.
  if (res.status === 200 && (res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    return /event: (done|error)\ndata: \{.*\}\n\n$/.test(text) ? undefined : fail('event stream without a last done or error event')
  }
  let body: any
  try {
    body = JSON.parse(text)
  } catch {
    return fail('body is not JSON')
  }
  if (res.status >= 400) {
    if (typeof body?.error !== 'string' || typeof body?.code !== 'string') return fail('error outside the envelope')
    const fe = body.field_errors
    if (fe !== undefined && (typeof fe !== 'object' || Object.values(fe).some((m) => typeof m !== 'string') || Object.keys(fe).length === 0)) return fail('bad field_errors')
  } else if (!c.url.endsWith('/openapi.json') && body?.meta?.requestId !== requestId) return fail('success without meta.requestId')
  return undefined
}

async function runAll(cases: Case[], deadline = Infinity): Promise<{ failures: Outcome[]; sent: number }> {
  const failures: Outcome[] = []
  let next = 0
  let sent = 0
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < cases.length && Date.now() < deadline) {
        const outcome = await run(cases[next++]!)
        sent++
        if (outcome) failures.push(outcome)
      }
    }),
  )
  return { failures, sent }
}

const report = (failures: Outcome[]) =>
  failures.slice(0, 12).map((f) => `${f.problem}: ${f.c.label} | ${f.c.method} ${f.c.url.slice(0, 160)} auth=${f.c.auth} ${JSON.stringify(f.c.headers).slice(0, 200)} -> ${f.status} ${f.body}`)

const rawRequest = (bytes: string) => rawHttp(app.url, bytes)

describe(`schema-driven fuzzing (FUZZ_SEED=${SEED})`, () => {
  it('covers every operation of the OpenAPI document', () => {
    expect(ops.length).toBeGreaterThan(50)
    expect(ops.map((o) => `${o.method} ${o.path}`)).toEqual(expect.arrayContaining(['GET /metrics', 'GET /ops/actors/counts', 'POST /swap/execute', 'POST /launch/venue-a']))
  })

  it('the fixed hostile inputs get no 5xx and no answer outside the envelope', async () => {
    const cases = fixedCases()
    expect(cases.length).toBeGreaterThan(200)
    const { failures } = await runAll(cases)
    expect(report(failures), `FUZZ_SEED=${SEED}`).toEqual([])
  }, 60_000)

  it('requests the HTTP parser refuses are answered in the envelope with X-Request-Id', async () => {
    const lines = [
      'BREW /api/v1/health HTTP/1.1\r\nHost: x\r\n\r\n',
      'GET /api/v1/health HTTP/7.0\r\nHost: x\r\n\r\n',
      'GET  HTTP/1.1\r\n\r\n',
      `GET /api/v1/health HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(40_000)}\r\n\r\n`,
      'POST /api/v1/agents HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n',
      'GET /api/v1/health HTTP/1.1\r\nHost: x\r\nX-Request-Id: a\u0001b\r\n\r\n',
    ]
    for (const bytes of lines) {
      const answer = await rawRequest(bytes)
      const [head, body] = answer.split('\r\n\r\n') as [string, string]
      expect(head, bytes.slice(0, 30)).toMatch(/^HTTP\/1\.1 4\d\d /)
      expect(head).toMatch(/\r\nX-Request-Id: [0-9a-f-]{36}\r\n/i)
      expect(JSON.parse(body)).toEqual({ error: expect.any(String), code: expect.any(String) })
    }
  })

  it(`${RANDOM_CASES} seeded random cases over every operation get no 5xx and no answer outside the envelope`, async () => {
    const arb = fc.constantFrom(...ops).chain(randomCase)
    const cases = fc.sample(arb, { seed: SEED, numRuns: RANDOM_CASES })
    const { failures, sent } = await runAll(cases, Date.now() + RANDOM_BUDGET_MS)
    expect(report(failures), `FUZZ_SEED=${SEED} (${sent} of ${cases.length} sent)`).toEqual([])
    expect(sent).toBeGreaterThan(50)
  }, 60_000)

  it('failed authentications past the per-IP budget are 429s with RateLimit headers', async () => {
    const cases: Case[] = Array.from({ length: 70 }, () => ({ label: 'bad key', method: 'GET', url: '/api/v1/me', auth: 'bad', headers: {} }))
    const { failures } = await runAll(cases)
    expect(report(failures), `FUZZ_SEED=${SEED}`).toEqual([])
    const last = await fetch(`${app.url}/api/v1/me`, { headers: { authorization: `Bearer ${keys.bad}` } })
    expect(last.status).toBe(429)
    expect(last.headers.get('ratelimit-policy')).toContain('"authfail"')
  })
})

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { randomUUID } from 'node:crypto'
import { startTestApp, rawHttp, type Api, type TestApp } from './support/app.ts'
import { operationsOf, type Operation } from './support/openapiArbitraries.ts'

// Request edges every route shares, walked over the OpenAPI document: bytes that are not UTF-8,
// a malformed or repeated Idempotency-Key, and the Allow header of OPTIONS.
let app: TestApp
let alice: { accountId: string; apiKey: string; api: Api }
let operator: { accountId: string; apiKey: string; api: Api }
let ops: Operation[]
let agentId: string

beforeAll(async () => {
  app = await startTestApp({}, { withChain: true })
  alice = await app.account({ name: 'alice' })
  operator = await app.account({ name: 'ops', operator: true })
  const doc = (await (await fetch(`${app.url}/api/v1/openapi.json`)).json()) as Parameters<typeof operationsOf>[0]
  ops = operationsOf(doc)
  const res = await alice.api('POST', '/agents', { name: 'bot', model: 'gpt-4o-mini', skills: [] })
  expect(res.status).toBe(201)
  agentId = res.body.id
}, 120_000)
afterAll(async () => {
  await app?.close()
})

/** A concrete path for an operation: each path parameter filled with a value of its shape. */
const pathOf = (op: Operation) =>
  op.base +
  op.path.replace(/\{(\w+)\}/g, (_m, name: string) =>
    name === 'address' ? `0x${'1'.repeat(40)}` : name === 'seq' ? '1' : name === 'deliveryId' ? `msg_${'0'.repeat(24)}` : name === 'id' && op.path.startsWith('/agents/') ? agentId : randomUUID(),
  )

async function send(op: Operation, body: Buffer | string | undefined, headers: Record<string, string> = {}) {
  const key = op.scope === 'operator' ? operator.apiKey : alice.apiKey
  const res = await fetch(`${app.url}${pathOf(op)}`, {
    method: op.method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
    ...(body !== undefined ? { body } : {}),
  })
  const text = await res.text()
  return { status: res.status, headers: res.headers, body: text.startsWith('{') ? JSON.parse(text) : text }
}

describe('bodies that are not UTF-8', () => {
  it('are 400 invalid_json on every route that takes a body, and nothing is stored', async () => {
    const withBody = ops.filter((op) => op.body !== undefined)
    expect(withBody.length).toBeGreaterThan(40)
    const bad = Buffer.concat([Buffer.from('{"name":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')])
    const seen: string[] = []
    for (const op of withBody) {
      const res = await send(op, bad)
      if (res.status !== 400 || res.body.code !== 'invalid_json') seen.push(`${op.method} ${op.path}: ${res.status} ${JSON.stringify(res.body).slice(0, 120)}`)
    }
    expect(seen).toEqual([])
    // An overlong encoding and a lone surrogate are not UTF-8 either.
    for (const bytes of [[0xc0, 0xaf], [0xed, 0xa0, 0x80]]) {
      const res = await send({ ...withBody[0]!, method: 'POST', path: '/me', base: '/api/v1' }, Buffer.concat([Buffer.from('{"name":"'), Buffer.from(bytes), Buffer.from('"}')]))
      expect({ bytes, status: res.status, code: res.body.code }).toEqual({ bytes, status: 400, code: 'invalid_json' })
    }
    expect((await alice.api('GET', '/me')).body.name).toBe('alice')
    expect((await alice.api('GET', `/agents/${agentId}`)).body.name).toBe('bot')
    // Valid UTF-8 beyond ASCII still goes through.
    const renamed = await alice.api('PATCH', `/agents/${agentId}`, { name: 'bøt ✓ 🚀' })
    expect({ status: renamed.status, name: renamed.body.name }).toEqual({ status: 200, name: 'bøt ✓ 🚀' })
  })
})

describe('Idempotency-Key', () => {
  it('empty, or sent twice, is 400 invalid_header on every route that takes one', async () => {
    const keyed = ops.filter((op) => op.headers['Idempotency-Key'])
    expect(keyed.length).toBeGreaterThan(8)
    const seen: string[] = []
    for (const op of keyed) {
      const empty = await send(op, '{}', { 'Idempotency-Key': '' })
      if (empty.status !== 400 || empty.body.code !== 'invalid_header') seen.push(`empty ${op.method} ${op.path}: ${empty.status} ${empty.body.code}`)
      const raw = await rawHttp(
        app.url,
        `${op.method} ${pathOf(op)} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${alice.apiKey}\r\nContent-Type: application/json\r\n` +
          `Idempotency-Key: a\r\nIdempotency-Key: b\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`,
      )
      const status = Number(raw.split(' ')[1])
      const code = /"code":"(\w+)"/.exec(raw)?.[1]
      if (status !== 400 || code !== 'invalid_header') seen.push(`twice ${op.method} ${op.path}: ${status} ${code}`)
    }
    expect(seen).toEqual([])
  })
})

describe('OPTIONS', () => {
  it('answers Allow with the methods the document gives the path, for every path (no method of a path that only looks alike)', async () => {
    const byPath = new Map<string, { op: Operation; methods: Set<string> }>()
    for (const op of ops) {
      const entry = byPath.get(op.path) ?? { op, methods: new Set<string>() }
      entry.methods.add(op.method)
      if (op.method === 'GET') entry.methods.add('HEAD')
      byPath.set(op.path, entry)
    }
    const seen: string[] = []
    for (const [path, { op, methods }] of byPath) {
      const res = await send({ ...op, method: 'OPTIONS' }, undefined)
      const allow = new Set((res.headers.get('allow') ?? '').split(',').map((m) => m.trim()).filter(Boolean))
      const want = [...methods].sort().join(', ')
      const got = [...allow].sort().join(', ')
      if (res.status !== 200 || got !== want) seen.push(`${path}: ${res.status} Allow ${got}, documented ${want}`)
    }
    expect(seen).toEqual([])
    const swap = await fetch(`${app.url}/api/v1/swap/execute`, { method: 'OPTIONS' })
    expect(swap.headers.get('allow')).toBe('POST')
  })
})

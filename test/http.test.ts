import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { apiClient, startTestApp, type Api, type TestApp } from './support/app.ts'
import { createHash, randomUUID } from 'node:crypto'
import { hashApiKey } from '../src/domain/accounts/apiKeyFormat.ts'
import { findIdempotencyKey } from '../src/adapters/db/idempotency.store.ts'
import { canonicalJson } from '../src/http/middleware/idempotency.ts'

let app: TestApp
let alice: { accountId: string; apiKey: string; api: Api }
let mallory: { accountId: string; apiKey: string; api: Api }
let agentId: string

beforeAll(async () => {
  app = await startTestApp()
  alice = await app.account({ name: 'alice' })
  mallory = await app.account({ name: 'mallory' })
  const res = await alice.api('POST', '/agents', { name: 'bot', model: 'gpt-4o-mini', skills: ['trading'] })
  expect(res.status).toBe(201)
  agentId = res.body.id
})
afterAll(async () => {
  await app?.close()
})

describe('envelope and conventions', () => {
  it('success carries meta.requestId equal to X-Request-Id; an incoming sane id is reused', async () => {
    const res = await alice.api('GET', '/me', undefined, { 'x-request-id': 'client-req-12345' })
    expect(res.status).toBe(200)
    expect(res.headers.get('x-request-id')).toBe('client-req-12345')
    expect(res.body.meta.requestId).toBe('client-req-12345')
    expect(typeof res.body.meta.timestamp).toBe('string')
    const bad = await alice.api('GET', '/me', undefined, { 'x-request-id': 'no spaces allowed!' })
    expect(bad.body.meta.requestId).not.toBe('no spaces allowed!')
    expect(bad.headers.get('x-request-id')).toBe(bad.body.meta.requestId)
  })

  it('unknown routes answer 404 in the envelope', async () => {
    for (const path of ['/nope', '/agents/x/y/z']) {
      const res = await alice.api('GET', path)
      expect(res.status).toBe(404)
      expect(res.body).toMatchObject({ code: 'not_found' })
    }
    const pub = await apiClient(`${app.url}/api/v1`)('GET', '/nothing-here')
    expect(pub.status).toBe(404)
    expect(pub.body).toMatchObject({ code: 'not_found' })
  })

  it('a NUL character anywhere in a body or query is a 422 naming the field, never a failed write', async () => {
    const res = await alice.api('POST', '/agents', { name: 'a\u0000b', model: 'gpt-4o-mini', skills: [], policy: { deny_tokens: ['X\u0000'] } })
    expect(res.status).toBe(422)
    expect(res.body).toMatchObject({ code: 'validation_failed', field_errors: { name: expect.any(String), 'policy.deny_tokens.0': expect.any(String) } })
    const q = await alice.api('GET', '/agents?cursor=%00')
    expect(q.status).toBe(422)
    expect(q.body.field_errors).toHaveProperty('cursor')
    const { rows } = await app.services.pool.query(`select count(*)::int as n from agent where name like 'a%b'`)
    expect(rows[0].n).toBe(0)
  })

  it('a query parameter on a route that takes none is a 422 naming it, never silently ignored', async () => {
    for (const path of ['/me?verbose=1', `/health?x=1`, '/models?page=2', '/keys/00000000-0000-4000-8000-000000000000?force=true']) {
      const method = path.startsWith('/keys') ? 'DELETE' : 'GET'
      const res = await alice.api(method, path)
      expect({ path, status: res.status, code: res.body.code }).toEqual({ path, status: 422, code: 'validation_failed' })
      expect(Object.keys(res.body.field_errors)).toHaveLength(1)
    }
    const victim = await alice.api('POST', '/agents', { name: 'keep', model: 'gpt-4o-mini', skills: [] })
    const del = await alice.api('DELETE', `/agents/${victim.body.id}`, { force: true })
    expect(del.status).toBe(422)
    expect((await alice.api('GET', `/agents/${victim.body.id}`)).body.status).toBe('stopped')
    const created = await alice.api('POST', '/agents?dryRun=true', { name: 'q', model: 'gpt-4o-mini', skills: [] })
    expect(created.status).toBe(422)
    expect(created.body.field_errors).toEqual({ dryRun: 'Unknown field.' })
  })

  it('a cursor that is not one of ours is a 422, even when its date would parse loosely', async () => {
    const forged = Buffer.from(JSON.stringify(['1', '00000000-0000-4000-8000-000000000000'])).toString('base64url')
    for (const cursor of [forged, 'garbage', Buffer.from('[]').toString('base64url')]) {
      const res = await alice.api('GET', `/agents?cursor=${cursor}`)
      expect(res.status).toBe(422)
      expect(res.body.field_errors).toHaveProperty('cursor')
    }
  })

  it('malformed JSON is 400 invalid_json; over 1 MB is 413', async () => {
    const res = await alice.api('POST', '/agents', '{"name": ')
    expect(res.status).toBe(400)
    expect(res.body).toEqual({ error: expect.any(String), code: 'invalid_json' })
    const big = await alice.api('POST', '/agents', JSON.stringify({ name: 'x'.repeat(1_100_000) }))
    expect(big.status).toBe(413)
    expect(big.body.code).toBe('payload_too_large')
  })

  it('public routes answer without credentials with IETF rate-limit headers', async () => {
    const pub = apiClient(`${app.url}/api/v1`)
    const health = await pub('GET', '/health')
    expect(health.status).toBe(200)
    expect(health.body).toMatchObject({ status: 'ok', database: { ok: true }, rpc: { configured: false } })
    expect(health.headers.get('ratelimit-policy')).toMatch(/^"ip";q=\d+;w=\d+/)
    expect(health.headers.get('ratelimit')).toMatch(/^"ip";r=\d+;t=\d+/)
    const models = await pub('GET', '/models')
    expect(models.body.models.find((m: { id: string }) => m.id === 'gpt-4o-mini')).toMatchObject({
      inputCreditsPerMillion: expect.any(Number),
      outputCreditsPerMillion: expect.any(Number),
    })
    const skills = await pub('GET', '/skills')
    expect(skills.body.skills.map((s: { slug: string }) => s.slug)).toEqual([
      'trading', 'token-launch', 'portfolio', 'market-intelligence', 'social', 'sniper', 'wallet', 'image-generation',
    ])
    expect(skills.body.strategies.map((s: { slug: string }) => s.slug)).toEqual([
      'monitor-exit', 'momentum', 'defi-yield', 'macro-guard', 'sniper',
    ])
  })
})

describe('Idempotency-Key in flight', () => {
  /** A claim on (alice, automations, key) in flight on `node`, as a request of that node makes it. */
  const holdKey = (key: string, body: unknown, node: string) =>
    app.services.pool.query(
      `insert into idempotency_key (account_id, route, key, fingerprint, status, locked_until, holder_node, holder_claim)
       values ($1, 'automations', $2, $3, 'in_flight', now() + interval '60 seconds', $4, $5)`,
      [alice.accountId, key, createHash('sha256').update(canonicalJson(body)).digest('hex'), node, randomUUID()],
    )

  it('held by a live node: 409 with Retry-After of a second (not the 60 s lease)', async () => {
    const body = { agentId, name: 'x' }
    await holdKey('held-live', body, app.services.runtime.node().id)
    const res = await alice.api('POST', '/automations', body, { 'idempotency-key': 'held-live' })
    expect([res.status, res.body.code, res.headers.get('retry-after')]).toEqual([409, 'idempotency_key_in_progress', '1'])
  })

  it('held by a node that is gone: the retry takes the key over at once', async () => {
    const gone = `gone-${randomUUID()}`
    await app.services.pool.query(
      `insert into service_node (id, pid, host, process_started, expires_at, stopped_at) values ($1, 1, 'elsewhere', 0, now(), now())`, [gone])
    const body = { agentId, name: 'x' }
    await holdKey('held-gone', body, gone)
    const res = await alice.api('POST', '/automations', body, { 'idempotency-key': 'held-gone' })
    expect(res.body.code).not.toBe('idempotency_key_in_progress')
    const { rows } = await app.services.pool.query(`select holder_node from idempotency_key where account_id = $1 and key = 'held-gone'`, [alice.accountId])
    // Taken over by this node's request (then released, as its answer was not a 2xx, or completed).
    expect(rows.every((r) => r.holder_node === app.services.runtime.node().id)).toBe(true)
  })

  it('read after its holder\'s node was retired (the claim was refused a moment before): the key says its holder is gone, so the 409 says Retry-After: 1, not the lease left', async () => {
    const gone = `gone-${randomUUID()}`
    await app.services.pool.query(
      `insert into service_node (id, pid, host, process_started, expires_at, stopped_at) values ($1, 1, 'elsewhere', 0, now(), now())`, [gone])
    await holdKey('held-read', { agentId, name: 'y' }, gone)
    const row = await findIdempotencyKey(app.services.pool, alice.accountId, 'automations', 'held-read')
    expect({ live: row?.holder_live, gone: row?.holder_gone, leaseLeft: (row?.retry_after ?? 0) > 30 }).toEqual({ live: false, gone: true, leaseLeft: true })
  })
})

describe('agents', () => {
  it('creates with every optional field and lists own agents only', async () => {
    const res = await alice.api('POST', '/agents', {
      name: 'full',
      model: 'gpt-4o',
      skills: ['trading', 'portfolio'],
      system_prompt: 'be careful',
      payout_wallet: '0xAbCdEf0123456789abcdef0123456789ABCDEF01',
      persona: 'calm',
      strategy: 'momentum',
      temperature: 0.7,
      is_public: true,
      public_description: 'a public bot',
    })
    expect(res.status).toBe(201)
    expect(res.body).toMatchObject({
      name: 'full', model: 'gpt-4o', skills: ['trading', 'portfolio'], systemPrompt: 'be careful',
      payoutWallet: '0xabcdef0123456789abcdef0123456789abcdef01', persona: 'calm', strategy: 'momentum',
      temperature: 0.7, isPublic: true, publicDescription: 'a public bot', status: 'stopped',
      walletAddress: expect.stringMatching(/^0x[0-9a-f]{40}$/),
    })
    expect(JSON.stringify(res.body)).not.toMatch(/wallet_key|encrypted|private/i)
    const list = await alice.api('GET', '/agents?limit=1')
    expect(list.body.agents).toHaveLength(1)
    expect(list.body.nextCursor).toEqual(expect.any(String))
    const page2 = await alice.api('GET', `/agents?limit=1&cursor=${list.body.nextCursor}`)
    expect(page2.body.agents).toHaveLength(1)
    expect(page2.body.agents[0].id).not.toBe(list.body.agents[0].id)
    const theirs = await mallory.api('GET', '/agents')
    expect(theirs.body.agents).toEqual([])
    const row = await app.services.pool.query('select wallet_key_encrypted from agent where id = $1', [res.body.id])
    expect(row.rows[0].wallet_key_encrypted).toMatch(/^v1:/)
  })

  it('start/stop go through the machine; an event the state refuses is 409 invalid_state', async () => {
    const start = await alice.api('POST', `/agents/${agentId}/start`)
    expect(start.status).toBe(200)
    expect(start.body.status).toBe('running')
    expect((await alice.api('POST', `/agents/${agentId}/start`)).body.code).toBe('invalid_state')
    const stop = await alice.api('POST', `/agents/${agentId}/stop`)
    expect(stop.body.status).toBe('stopped')
    // Created, started, stopped: run interval 0, so the start had no schedule to check.
    const { rows } = await app.services.pool.query('select status, version from actor where id = $1', [agentId])
    expect(rows[0]).toMatchObject({ status: 'stopped', version: '3' })
  })

  it('POST and PATCH both update; policy merges; a deleted agent refuses updates and commands', async () => {
    const a = await alice.api('POST', '/agents', { name: 'tmp', model: 'gpt-4o-mini', skills: [] })
    const p1 = await alice.api('POST', `/agents/${a.body.id}`, { name: 'renamed' })
    expect(p1.body.name).toBe('renamed')
    const p2 = await alice.api('PATCH', `/agents/${a.body.id}`, { policy: { max_trade_usd: '25' }, temperature: 1.5 })
    expect(p2.body.policy).toMatchObject({ maxTradeUsd: '25', maxDailyUsd: '10000', maxPriceImpactBps: 1500, paused: false })
    expect(p2.body.temperature).toBe(1.5)
    const del = await alice.api('DELETE', `/agents/${a.body.id}`)
    expect(del.status).toBe(200)
    expect(del.body.status).toBe('deleted')
    expect((await alice.api('PATCH', `/agents/${a.body.id}`, { name: 'x' })).status).toBe(409)
    expect((await alice.api('POST', `/agents/${a.body.id}/start`)).body.code).toBe('invalid_state')
  })

  it('concurrent policy patches merge: one pausing the agent and one changing a cap never undo each other', async () => {
    const a = await alice.api('POST', '/agents', { name: 'racy', model: 'gpt-4o-mini', skills: [] })
    for (let round = 0; round < 5; round++) {
      const cap = String(10 + round)
      // Token lists hold addresses (without a chain, symbols cannot be resolved).
      const denied = `0x${String(round).repeat(40)}`
      await Promise.all([
        alice.api('PATCH', `/agents/${a.body.id}`, { policy: { paused: round % 2 === 0 } }),
        alice.api('PATCH', `/agents/${a.body.id}`, { policy: { max_trade_usd: cap } }),
        alice.api('PATCH', `/agents/${a.body.id}`, { policy: { deny_tokens: [denied] } }),
      ])
      const { rows } = await app.services.pool.query('select policy from agent where id = $1', [a.body.id])
      expect(rows[0].policy).toMatchObject({ paused: round % 2 === 0, max_trade_usd: cap, deny_tokens: [denied], max_daily_usd: '10000' })
    }
  })

  it('whitelist: add, list, remove, journaled', async () => {
    const addr = '0x2222222222222222222222222222222222222222'
    const add = await alice.api('POST', `/agents/${agentId}/whitelist`, { address: addr, label: 'cold' })
    expect(add.status).toBe(201)
    expect(add.body).toMatchObject({ address: addr, label: 'cold', usable: true })
    const list = await alice.api('GET', `/agents/${agentId}/whitelist`)
    expect(list.body.whitelist.map((w: { address: string }) => w.address)).toEqual([addr])
    const del = await alice.api('DELETE', `/agents/${agentId}/whitelist`, { address: addr })
    expect(del.body).toMatchObject({ address: addr, deleted: true })
    expect((await alice.api('DELETE', `/agents/${agentId}/whitelist`, { address: addr })).status).toBe(404)
    const { rows } = await app.services.pool.query('select action from audit_log where subject_id = $1 order by id', [agentId])
    expect(rows.map((r) => r.action)).toEqual(['whitelist.add', 'whitelist.remove'])
  })
})

describe('BOLA: another account never sees or touches an agent', () => {
  const routes: Array<[string, string, unknown?]> = [
    ['GET', ''],
    ['POST', '', { name: 'x' }],
    ['PATCH', '', { name: 'x' }],
    ['DELETE', ''],
    ['POST', '/start'],
    ['POST', '/stop'],
    ['GET', '/whitelist'],
    ['POST', '/whitelist', { address: '0x3333333333333333333333333333333333333333' }],
    ['DELETE', '/whitelist', { address: '0x3333333333333333333333333333333333333333' }],
  ]
  it.each(routes)('%s /agents/:id%s -> 404', async (method, suffix, body) => {
    const res = await mallory.api(method, `/agents/${agentId}${suffix}`, body)
    expect(res.status).toBe(404)
    expect(res.body.code).toBe('not_found')
  })
  it('the agent is untouched afterwards', async () => {
    const res = await alice.api('GET', `/agents/${agentId}`)
    expect(res.body).toMatchObject({ name: 'bot', status: 'stopped' })
  })
  it("another account's key cannot be deleted (404)", async () => {
    const k = await alice.api('POST', '/keys', { name: 'second' })
    const res = await mallory.api('DELETE', `/keys/${k.body.id}`)
    expect(res.status).toBe(404)
  })
})

describe('validation: bad input is 422 naming each field, never 5xx', () => {
  const id = () => agentId
  const cases: Array<[string, string | (() => string), unknown, string[]]> = [
    ['POST', '/agents', {}, ['name']],
    ['POST', '/agents', { name: 'x', model: 'nope', skills: ['trading'] }, ['model']],
    ['POST', '/agents', { name: 'x', model: 'gpt-4o-mini', skills: ['flying'] }, ['skills.0']],
    ['POST', '/agents', { name: 'x', model: 'gpt-4o-mini', skills: [], systemPrompt: 'typo' }, ['systemPrompt']],
    ['POST', '/agents', { name: 'x', model: 'gpt-4o-mini', skills: [], temperature: 2.5, payout_wallet: '0x12' }, ['temperature', 'payout_wallet']],
    ['POST', '/agents', { name: 'x', model: 'gpt-4o-mini', skills: [], strategy: 'yolo', policy: { max_trade_usd: -1 } }, ['strategy', 'policy.max_trade_usd']],
    ['POST', '/agents', [1, 2], ['body']],
    ['PATCH', () => `/agents/${id()}`, { name: '' }, ['name']],
    ['PATCH', () => `/agents/${id()}`, { policy: { paused: 'yes', unknown: 1 } }, ['policy.paused', 'policy.unknown']],
    ['POST', () => `/agents/${id()}/start`, { force: true }, ['force']],
    ['POST', () => `/agents/${id()}/whitelist`, { address: 'nope', label: 5 }, ['address', 'label']],
    ['POST', '/keys', { name: 'k', scopes: ['root'] }, ['scopes.0']],
    ['POST', '/keys', { name: 'k', expiresAt: 'tomorrow' }, ['expiresAt']],
    ['POST', '/me', { name: 5 }, ['name']],
    ['GET', '/agents?limit=1000', undefined, ['limit']],
    ['GET', '/agents?cursor=garbage', undefined, ['cursor']],
    ['GET', '/agents?sort=name', undefined, ['sort']],
  ]
  it.each(cases)('%s %s', async (method, path, body, fields) => {
    const p = typeof path === 'function' ? path() : path
    const res = await alice.api(method, p, body)
    expect(res.status).toBe(422)
    expect(res.body.code).toBe('validation_failed')
    expect(Object.keys(res.body.field_errors).sort()).toEqual([...fields].sort())
  })
  it('a path id that is not a uuid is 404', async () => {
    expect((await alice.api('GET', '/agents/not-a-uuid')).status).toBe(404)
  })
})

describe('keys and scopes', () => {
  it('a new key is shown once, listed without its value, works, and is refused at once after delete', async () => {
    const created = await alice.api('POST', '/keys', { name: 'ci', scopes: ['read'] })
    expect(created.status).toBe(201)
    expect(created.body.key).toMatch(/^cpk_[A-Za-z0-9]{38}$/)
    const list = await alice.api('GET', '/keys')
    expect(JSON.stringify(list.body)).not.toContain(created.body.key)
    expect(list.body.keys.find((k: { id: string }) => k.id === created.body.id)).toMatchObject({ name: 'ci', scopes: ['read'] })
    const readOnly = apiClient(`${app.url}/api/v1`, created.body.key)
    expect((await readOnly('GET', '/agents')).status).toBe(200)
    const denied = await readOnly('POST', `/agents/${agentId}/start`)
    expect(denied.status).toBe(403)
    expect(denied.body.code).toBe('forbidden')
    expect((await readOnly('GET', '/keys')).status).toBe(403)
    await alice.api('DELETE', `/keys/${created.body.id}`)
    const after = await readOnly('GET', '/agents')
    expect(after.status).toBe(401)
    expect(after.body.code).toBe('unauthorized')
  })

  it('a key with a bad checksum is refused', async () => {
    const bad = alice.apiKey.slice(0, -1) + (alice.apiKey.endsWith('A') ? 'B' : 'A')
    const res = await apiClient(`${app.url}/api/v1`, bad)('GET', '/me')
    expect(res.status).toBe(401)
  })

  it('an expired key is refused', async () => {
    const created = await alice.api('POST', '/keys', { name: 'short', expiresAt: new Date(Date.now() + 1500).toISOString() })
    const k = apiClient(`${app.url}/api/v1`, created.body.key)
    expect((await k('GET', '/me')).status).toBe(200)
    await new Promise((r) => setTimeout(r, 1600))
    expect((await k('GET', '/me')).status).toBe(401)
  })
})

describe('key revocation against the key cache', () => {
  it('a read that began before a revocation does not refill the cache after it', async () => {
    const { apiKey } = await app.account({ name: 'revoked-mid-read' })
    const core = app.services.core
    // The read starts (the key still exists), the revocation arrives, then the row goes away.
    const inFlight = core.authenticateKey({ value: apiKey })
    core.forgetApiKey(hashApiKey(apiKey))
    await app.services.pool.query('delete from api_key where hash = $1', [hashApiKey(apiKey)])
    await inFlight
    expect(await core.authenticateKey({ value: apiKey })).toBeUndefined()
  })
})

describe('operators', () => {
  it('only operator accounts read /ops; they see every account', async () => {
    expect((await alice.api('GET', '/ops/actors')).status).toBe(403)
    const op = await app.account({ operator: true, name: 'op' })
    const list = await op.api('GET', '/ops/actors?kind=agent&status=stopped&limit=100')
    expect(list.status).toBe(200)
    expect(list.body.actors.map((a: { id: string }) => a.id)).toContain(agentId)
    const one = await op.api('GET', `/ops/actors/${agentId}`)
    expect(one.body).toMatchObject({ id: agentId, kind: 'agent', accountId: alice.accountId, status: 'stopped' })
    expect(one.body.journal.map((j: { event: { type: string } }) => j.event.type)).toContain('agent.start')
    expect(Array.isArray(one.body.timers)).toBe(true)
    expect(Array.isArray(one.body.effects)).toBe(true)
    expect((await op.api('GET', '/ops/actors/nope')).status).toBe(404)
  })

  it('the API prefix and first segment in another case are a 404, never a way past the key or operator check', async () => {
    const anonymous = apiClient(app.url)
    for (const path of ['/api/v1/OPS/nodes', '/API/V1/ops/nodes', '/api/v1/Ops/actors/counts']) {
      expect({ path, status: (await anonymous('GET', path)).status }).toEqual({ path, status: 404 })
      const withKey = await apiClient(app.url, alice.apiKey)('GET', path)
      expect({ path, status: withKey.status }).toEqual({ path, status: 404 })
    }
    // The tool server likewise: its key check and rate limit are middleware of its router.
    for (const path of ['/API/MCP/tools', '/api/MCP/tools', '/Api/mcp/call']) {
      expect({ path, status: (await anonymous('GET', path)).status }).toEqual({ path, status: 404 })
    }
  })
})

describe('methods', () => {
  it('a known path with another method is 405 with Allow', async () => {
    const res = await alice.api('PUT', '/me')
    expect(res.status).toBe(405)
    expect(res.body.code).toBe('method_not_allowed')
    expect(res.headers.get('allow')).toContain('GET')
    expect((await alice.api('PUT', '/agents')).status).toBe(405)
  })
})

describe('metrics', () => {
  it('operators scrape Prometheus metrics: actors per kind and state, HTTP requests by route', async () => {
    const op = await app.account({ operator: true, name: 'scraper' })
    const res = await fetch(`${app.url}/metrics`, { headers: { authorization: `Bearer ${op.apiKey}` } })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toContain('text/plain')
    const text = await res.text()
    expect(text).toMatch(/actors\{kind="agent",status="stopped"\} \d+/)
    expect(text).toMatch(/http_requests_total\{route="\/api\/v1\/agents\/:id",method="GET",status="200"\} \d+/)
    expect(text).toContain('effects_open')
    expect((await fetch(`${app.url}/metrics`, { headers: { authorization: `Bearer ${alice.apiKey}` } })).status).toBe(403)
    expect((await fetch(`${app.url}/metrics`)).status).toBe(401)
  })
})

describe('OpenAPI', () => {
  it('serves an OpenAPI 3.1 document generated from the request schemas', async () => {
    const res = await apiClient(`${app.url}/api/v1`)('GET', '/openapi.json')
    expect(res.status).toBe(200)
    expect(res.body.openapi).toBe('3.1.0')
    const create = res.body.paths['/agents'].post
    expect(create['x-scope']).toBe('trade')
    const body = create.requestBody.content['application/json'].schema
    // model and skills default (the catalog's default model, the strategy preset's skills).
    expect(body.required).toEqual(['name'])
    expect(body.additionalProperties).toBe(false)
    expect(Object.keys(body.properties)).toEqual(expect.arrayContaining(['model', 'skills', 'payout_wallet']))
    const launch = res.body.paths['/launch/venue-a'].post
    expect(launch.parameters).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'Idempotency-Key', in: 'header', required: true })]))
    expect(res.body.paths['/tokens/{address}/trades'].get.parameters.map((p: { name: string }) => p.name)).toContain('ours')
  })
})

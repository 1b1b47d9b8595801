import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createWalletClient, http, parseEther, type Address } from 'viem'
import { apiClient, startTestApp, type Api, type TestApp } from './support/app.ts'
import { BondingCurveLaunchpadArtifact } from '../src/dev/artifacts/index.ts'

/**
 * Requests and responses shaped exactly as the reference client (ClawPump's TypeScript SDK)
 * sends and reads them: snake_case agent bodies, camelCase answers, defaults on create, skills
 * with `alwaysOn`, and `GET /price?mint=&currency=usd`.
 */
let app: TestApp
let api: Api
let pub: Api
let m: NonNullable<TestApp['services']['chain']>['manifest']
let defaultModel: string
let openapi: any

const AGENT_FIELDS = [
  'id', 'name', 'model', 'skills', 'systemPrompt', 'payoutWallet', 'persona', 'strategy', 'temperature', 'isPublic', 'allowCopy',
  'publicDescription', 'runIntervalSeconds', 'mode', 'policy', 'walletAddress', 'status', 'statusReason', 'createdAt', 'updatedAt', 'pendingChanges',
]

/** Every key of a JSON value, nested ones included. */
function keysOf(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(keysOf)
  if (value === null || typeof value !== 'object') return []
  return Object.entries(value).flatMap(([k, v]) => [k, ...keysOf(v)])
}

/** An agent as the reference client reads it: camelCase fields, no snake_case anywhere. */
function expectAgentShape(body: any) {
  expect(Object.keys(body).filter((k) => k !== 'meta').sort()).toEqual([...AGENT_FIELDS].sort())
  expect(keysOf(body).filter((k) => k.includes('_'))).toEqual([])
  expect(body.walletAddress).toMatch(/^0x[0-9a-f]{40}$/)
  expect(new Date(body.createdAt).toISOString()).toBe(body.createdAt)
  expect(new Date(body.updatedAt).toISOString()).toBe(body.updatedAt)
  expect(body.policy).toEqual({
    maxTradeUsd: expect.any(String), maxDailyUsd: expect.any(String), maxPriceImpactBps: expect.any(Number),
    allowTokens: expect.any(Array), denyTokens: expect.any(Array), paused: expect.any(Boolean),
    requireApprovalAboveUsd: null, approvalTtlSeconds: 900,
  })
}

beforeAll(async () => {
  app = await startTestApp({}, { withChain: true })
  m = app.services.chain!.manifest
  api = (await app.account()).api
  pub = apiClient(`${app.url}/api/v1`)
  const models = await pub('GET', '/models')
  const defaults = models.body.models.filter((x: { default: boolean }) => x.default === true)
  expect(defaults).toHaveLength(1)
  expect(models.body.models.every((x: { default: unknown }) => typeof x.default === 'boolean')).toBe(true)
  defaultModel = defaults[0].id
  openapi = (await pub('GET', '/openapi.json')).body
})
afterAll(async () => {
  await app?.close()
})

describe('agents as the reference client creates, reads and updates them', () => {
  it('{ name, strategy } alone: the default model and the preset skills, in a camelCase agent', async () => {
    const presets = (await pub('GET', '/skills')).body.strategies
    const momentum = presets.find((p: { slug: string }) => p.slug === 'momentum')
    const res = await api('POST', '/agents', { name: 'scout', strategy: 'momentum' })
    expect(res.status).toBe(201)
    expectAgentShape(res.body)
    expect(res.body).toMatchObject({
      name: 'scout', model: defaultModel, skills: momentum.skills, strategy: 'momentum', persona: null, systemPrompt: null,
      payoutWallet: null, isPublic: false, publicDescription: null, temperature: null, status: 'stopped', statusReason: null,
    })
    expect(momentum.skills.length).toBeGreaterThan(0)
    const { rows } = await app.services.pool.query('select model, skills, strategy from agent where id = $1', [res.body.id])
    expect(rows[0]).toEqual({ model: defaultModel, skills: momentum.skills, strategy: 'momentum' })
  })

  it('{ name, strategy, persona }: the persona is kept; every preset gives its own skills', async () => {
    const presets = (await pub('GET', '/skills')).body.strategies as Array<{ slug: string; skills: string[] }>
    for (const p of presets) {
      const res = await api('POST', '/agents', { name: `p-${p.slug}`, strategy: p.slug, persona: 'a patient trader' })
      expect(res.status).toBe(201)
      expectAgentShape(res.body)
      expect(res.body).toMatchObject({ model: defaultModel, skills: p.skills, strategy: p.slug, persona: 'a patient trader' })
    }
  })

  it('{ name } alone: the default model and no skills', async () => {
    const res = await api('POST', '/agents', { name: 'bare' })
    expect(res.status).toBe(201)
    expectAgentShape(res.body)
    expect(res.body).toMatchObject({ name: 'bare', model: defaultModel, skills: [], strategy: null })
  })

  it('given model and skills win over the defaults and stay validated', async () => {
    const given = await api('POST', '/agents', { name: 'given', strategy: 'momentum', model: 'gpt-4o', skills: [] })
    expect(given.status).toBe(201)
    expect(given.body).toMatchObject({ model: 'gpt-4o', skills: [], strategy: 'momentum' })
    const bad = await api('POST', '/agents', { name: 'bad', strategy: 'momentum', model: 'nope', skills: ['flying'] })
    expect(bad.status).toBe(422)
    expect(bad.body.code).toBe('validation_failed')
    expect(Object.keys(bad.body.field_errors).sort()).toEqual(['model', 'skills.0'])
    const strategy = await api('POST', '/agents', { name: 'bad', strategy: 'yolo' })
    expect(strategy.status).toBe(422)
    expect(Object.keys(strategy.body.field_errors)).toEqual(['strategy'])
    // Request bodies stay snake_case: a camelCase field is refused, never dropped.
    const camel = await api('POST', '/agents', { name: 'typo', strategy: 'momentum', systemPrompt: 'x', isPublic: true })
    expect(camel.status).toBe(422)
    expect(Object.keys(camel.body.field_errors).sort()).toEqual(['isPublic', 'systemPrompt'])
  })

  it('updates with POST /agents/:id and PATCH (snake_case bodies) answer camelCase; reads, lists and commands too', async () => {
    const created = await api('POST', '/agents', { name: 'upd', strategy: 'sniper' })
    const id = created.body.id
    const post = await api('POST', `/agents/${id}`, { system_prompt: 'be brief', is_public: true, policy: { max_trade_usd: '50' } })
    expect(post.status).toBe(200)
    expectAgentShape(post.body)
    expect(post.body).toMatchObject({ systemPrompt: 'be brief', isPublic: true, policy: { maxTradeUsd: '50', maxDailyUsd: '10000' } })
    const payout = '0x1111111111111111111111111111111111111111'
    const patch = await api('PATCH', `/agents/${id}`, { public_description: 'shown publicly', payout_wallet: payout, temperature: 0.2 })
    expect(patch.status).toBe(200)
    expectAgentShape(patch.body)
    expect(patch.body).toMatchObject({ publicDescription: 'shown publicly', payoutWallet: payout, temperature: 0.2, systemPrompt: 'be brief' })
    expect(Date.parse(patch.body.updatedAt)).toBeGreaterThanOrEqual(Date.parse(created.body.updatedAt))
    const { rows } = await app.services.pool.query('select system_prompt, is_public, public_description, payout_wallet, policy from agent where id = $1', [id])
    expect(rows[0]).toMatchObject({ system_prompt: 'be brief', is_public: true, public_description: 'shown publicly', payout_wallet: payout })
    expect(rows[0].policy.max_trade_usd).toBe('50')
    expect((await api('PATCH', `/agents/${id}`, { publicDescription: 'x' })).body.field_errors).toEqual({ publicDescription: 'Unknown field.' })

    const got = await api('GET', `/agents/${id}`)
    expectAgentShape(got.body)
    expect(got.body.walletAddress).toBe(created.body.walletAddress)
    const list = await api('GET', '/agents?limit=100')
    expect(list.body.agents.length).toBeGreaterThan(1)
    for (const a of list.body.agents) expectAgentShape(a)
    const started = await api('POST', `/agents/${id}/start`)
    expectAgentShape(started.body)
    expect(started.body.status).toBe('running')
    const stopped = await api('POST', `/agents/${id}/stop`)
    expect(stopped.body.status).toBe('stopped')
    const deleted = await api('DELETE', `/agents/${id}`)
    expectAgentShape(deleted.body)
    expect(deleted.body.status).toBe('deleted')
  })

  it('whitelist entries are camelCase too', async () => {
    const a = await api('POST', '/agents', { name: 'wl' })
    const address = '0x2222222222222222222222222222222222222222'
    const added = await api('POST', `/agents/${a.body.id}/whitelist`, { address, label: 'cold' })
    expect(added.status).toBe(201)
    expect(Object.keys(added.body).filter((k) => k !== 'meta').sort()).toEqual(['address', 'createdAt', 'label', 'usable', 'usableAt'])
    expect(added.body).toMatchObject({ address, label: 'cold', usable: true, usableAt: expect.any(String), createdAt: expect.any(String) })
    const list = await api('GET', `/agents/${a.body.id}/whitelist`)
    expect(list.body.whitelist).toEqual([{ address, label: 'cold', usable: true, usableAt: added.body.usableAt, createdAt: added.body.createdAt }])
    const removed = await api('DELETE', `/agents/${a.body.id}/whitelist`, { address })
    expect(removed.body).toMatchObject({ address, usableAt: added.body.usableAt, deleted: true })
    expect(keysOf(removed.body).filter((k) => k.includes('_'))).toEqual([])
  })

  it('the OpenAPI document describes the camelCase agent and whitelist answers', async () => {
    const agent = openapi.components.schemas.Agent
    expect(Object.keys(agent.properties).sort()).toEqual([...AGENT_FIELDS].sort())
    expect(Object.keys(agent.properties.policy.properties).sort()).toEqual(
      ['allowTokens', 'approvalTtlSeconds', 'denyTokens', 'maxDailyUsd', 'maxPriceImpactBps', 'maxTradeUsd', 'paused', 'requireApprovalAboveUsd'],
    )
    const ok = openapi.paths['/agents/{id}'].patch.responses['200'].content['application/json'].schema
    expect(JSON.stringify(ok)).toContain('#/components/schemas/Agent')
    expect(Object.keys(openapi.components.schemas.WhitelistEntry.properties).sort()).toEqual(['address', 'createdAt', 'label', 'usable', 'usableAt'])
    expect(openapi.components.schemas.Skill.required).toContain('alwaysOn')
    expect(openapi.paths['/price'].get.parameters.map((p: { name: string }) => p.name)).toEqual(expect.arrayContaining(['tokens', 'mint', 'currency']))
  })
})

describe('GET /skills', () => {
  it('every skill carries alwaysOn (a boolean) beside slug, name and description', async () => {
    const res = await pub('GET', '/skills')
    expect(res.status).toBe(200)
    for (const s of res.body.skills) {
      expect(s).toEqual({ slug: expect.any(String), name: expect.any(String), description: expect.any(String), alwaysOn: expect.any(Boolean), tools: expect.any(Array) })
    }
    expect(res.body.skills.filter((s: { alwaysOn: boolean }) => s.alwaysOn).map((s: { slug: string }) => s.slug)).toEqual(['portfolio'])
  })
})

describe('GET /price as the reference client asks for it', () => {
  let agent: { id: string }
  let token: Address

  /** Buys `eth` of the token from the agent's own wallet, then indexes the chain. */
  async function buy(eth: string) {
    const chain = app.services.chain!
    const account = await app.services.wallet!.loadAccount(agent.id)
    const w = createWalletClient({ account, chain: chain.chain, transport: http(chain.rpcUrl) })
    const hash = await w.writeContract({
      address: m.contracts.venueA, abi: BondingCurveLaunchpadArtifact.abi, functionName: 'buy',
      args: [token, parseEther(eth), 0n, account.address], value: parseEther(eth),
    })
    await chain.publicClient.waitForTransactionReceipt({ hash, pollingInterval: 50 })
    await app.services.indexer!.syncOnce()
  }

  /** Percent change from `from` to `to` (both PRICE_SCALE), two decimals truncated, as the API computes it. */
  const pct = (to: bigint, from: bigint) => Number(((to - from) * 10_000n) / from) / 100

  async function snapshots(): Promise<bigint[]> {
    const { rows } = await app.services.pool.query(
      'select price::text from token_snapshot where token_address = $1 order by block_number, log_index', [token.toLowerCase()],
    )
    return rows.map((r) => BigInt(r.price))
  }

  beforeAll(async () => {
    agent = (await api('POST', '/agents', { name: 'launcher', skills: ['token-launch'] })).body
    expect((await api('POST', '/dev/faucet', { agentId: agent.id, eth: '5' })).status).toBe(200)
    const res = await api('POST', '/launch/venue-a', { agentId: agent.id, symbol: 'REFC', name: 'Reference Coin', quote: 'ETH' }, { 'idempotency-key': `k-${Date.now()}` })
    expect(res.status).toBe(202)
    const until = Date.now() + 20_000
    for (;;) {
      const r = await api('GET', `/launch/${res.body.id}`)
      if (r.body.status === 'live') {
        token = r.body.tokenAddress
        break
      }
      if (r.body.status === 'failed' || Date.now() > until) throw new Error(`launch: ${r.body.status}`)
      await new Promise((r) => setTimeout(r, 50))
    }
    await app.services.indexer!.syncOnce()
  })

  it('?mint=ETH&currency=usd answers the token at the top level: mint, symbol, name, a numeric price, currency', async () => {
    const res = await pub('GET', '/price?mint=ETH&currency=usd')
    expect(res.status).toBe(200)
    const weth = m.contracts.weth.toLowerCase()
    expect(res.body).toMatchObject({
      mint: weth, symbol: 'ETH', name: 'Ether', price: 3000, priceUsd: '3000', currency: 'usd',
      change24h: null, volume24h: null, marketCap: null,
    })
    expect(res.body.prices).toEqual([expect.objectContaining({ mint: weth, price: 3000, currency: 'usd' })])
    const stock = await pub('GET', '/price?mint=tslax&currency=USD')
    expect(stock.body).toMatchObject({ mint: m.stocks[0]!.address.toLowerCase(), symbol: 'TSLAx', name: m.stocks[0]!.name, price: 350, priceUsd: '350', currency: 'usd' })
  })

  it('a launched token carries 24 h change, 24 h volume and market cap from the indexer', async () => {
    await buy('0.1')
    const res = await pub('GET', `/price?mint=${token}&currency=usd`)
    expect(res.status).toBe(200)
    const snaps = await snapshots()
    const detail = await pub('GET', `/tokens/${token}`)
    expect(res.body).toMatchObject({
      mint: token.toLowerCase(), symbol: 'REFC', name: 'Reference Coin', currency: 'usd', kind: 'launched',
      priceUsd: detail.body.priceUsd, price: Number(detail.body.priceUsd),
      // 0.1 ETH at $3,000, as the board and the stats count it.
      volume24h: 300, volume24hUsd: '300.00',
      marketCapUsd: detail.body.marketCapUsd, marketCap: Number(detail.body.marketCapUsd),
      // The token is younger than a day: compared with its opening price.
      change24h: pct(snaps.at(-1)!, snaps[0]!),
    })
    expect(res.body.change24h).toBeGreaterThan(0)
    expect(typeof res.body.price).toBe('number')
    expect(detail.body.change24h).toBe(res.body.change24h)
    const board = await pub('GET', '/tokens?limit=100')
    expect(board.body.tokens.find((t: { address: string }) => t.address === token.toLowerCase())).toMatchObject({
      change24h: res.body.change24h, volume24hUsd: '300.00', marketCapUsd: res.body.marketCapUsd,
    })
  })

  it('24 h change compares with the price 24 h ago; older trades leave the 24 h volume', async () => {
    // Move the launch and the first trade a day back: no trade in the window, no change.
    const addr = token.toLowerCase()
    await app.services.pool.query(`update token set created_at = now() - interval '25 hours' where address = $1`, [addr])
    await app.services.pool.query(`update trade set at = now() - interval '25 hours' where token_address = $1`, [addr])
    const quiet = await pub('GET', `/price?mint=${token}`)
    expect(quiet.body).toMatchObject({ change24h: 0, volume24h: 0, volume24hUsd: '0.00' })
    const dayAgo = (await snapshots()).at(-1)!
    await buy('0.2')
    const moved = await pub('GET', `/price?tokens=${token}&currency=usd`)
    const now = (await snapshots()).at(-1)!
    expect(moved.body.prices[0]).toMatchObject({ change24h: pct(now, dayAgo), volume24h: 600, volume24hUsd: '600.00' })
    expect(moved.body.prices[0].change24h).toBeGreaterThan(0)
  })

  it('a currency other than usd is 422 naming currency; an unknown token is 422 naming mint', async () => {
    const eur = await pub('GET', '/price?mint=ETH&currency=eur')
    expect(eur.status).toBe(422)
    expect(eur.body.code).toBe('validation_failed')
    expect(Object.keys(eur.body.field_errors)).toEqual(['currency'])
    const unknown = await pub('GET', '/price?mint=DOGE&currency=usd')
    expect(unknown.status).toBe(422)
    expect(unknown.body.code).toBe('validation_failed')
    expect(unknown.body.field_errors.mint).toMatch(/DOGE/)
    const stranger = await pub('GET', `/price?mint=0x${'34'.repeat(20)}`)
    expect(stranger.status).toBe(422)
    expect(stranger.body.field_errors.mint).toMatch(/0x3434/)
  })

  it('?tokens= still answers a list, each entry in the same shape', async () => {
    const res = await pub('GET', `/price?tokens=ETH,USDC,${token}`)
    expect(res.status).toBe(200)
    expect(res.body.prices.map((p: any) => [p.symbol, p.currency, typeof p.price])).toEqual([
      ['ETH', 'usd', 'number'], ['USDC', 'usd', 'number'], ['REFC', 'usd', 'number'],
    ])
    expect(res.body.prices[1]).toMatchObject({ mint: m.contracts.usdc.toLowerCase(), name: 'USD Coin', price: 1, priceUsd: '1' })
    expect(res.body).not.toHaveProperty('mint')
  })
})

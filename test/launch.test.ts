import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { erc20Abi, type Address } from 'viem'
import { startTestApp, type Api, type TestApp, waitForLaunchEnd } from './support/app.ts'
import { AmmPairArtifact, BondingCurveLaunchpadArtifact } from '../src/dev/artifacts/index.ts'

let app: TestApp
let api: Api
let other: Api
let agentId: string
let wallet: Address

const SUPPLY = 1_000_000_000n * 10n ** 18n
const key = () => `k-${Math.random().toString(36).slice(2)}`

const waitLive = (id: string, client = api) => waitForLaunchEnd(client, id)

async function newAgent(fund = true) {
  const a = await api('POST', '/agents', { name: 'launcher', model: 'gpt-4o-mini', skills: ['token-launch'] })
  if (fund) {
    const f = await api('POST', '/dev/faucet', { agentId: a.body.id, eth: '20', usdc: '20000' })
    expect(f.status).toBe(200)
  }
  return a.body as { id: string; walletAddress: Address }
}

beforeAll(async () => {
  app = await startTestApp({}, { withChain: true })
  const acc = await app.account()
  api = acc.api
  other = (await app.account({ name: 'other' })).api
  const a = await newAgent()
  agentId = a.id
  wallet = a.walletAddress
})
afterAll(async () => {
  await app?.close()
})

describe('launches go live on chain', () => {
  it('venue-a: the token exists, its whole supply sits in the bonding curve', async () => {
    const res = await api('POST', '/launch/venue-a', { agentId, symbol: 'CURVE', name: 'Curve Cat', quote: 'ETH', description: 'meow', logoUrl: 'https://example.com/cat.png' }, { 'idempotency-key': key() })
    expect(res.status).toBe(202)
    expect(res.body).toMatchObject({ agentId, venue: 'venue-a', symbol: 'CURVE', quote: 'ETH', status: 'simulating', progress: { step: 'simulating' } })
    const live = await waitLive(res.body.id)
    expect(live).toMatchObject({ status: 'live', progress: { step: 'live', percent: 100 }, error: null })
    expect(live.txHash).toMatch(/^0x[0-9a-f]{64}$/)
    const client = app.services.chain!.publicClient
    const token = live.tokenAddress as Address
    expect(await client.readContract({ address: token, abi: erc20Abi, functionName: 'totalSupply' })).toBe(SUPPLY)
    const venueA = app.services.chain!.manifest.contracts.venueA
    expect(await client.readContract({ address: token, abi: erc20Abi, functionName: 'balanceOf', args: [venueA] })).toBe(SUPPLY)
    const curve = await client.readContract({ address: venueA, abi: BondingCurveLaunchpadArtifact.abi, functionName: 'getCurve', args: [token] })
    expect((curve as { creator: string }).creator.toLowerCase()).toBe(wallet.toLowerCase())
    const board = await api('GET', `/tokens/${token}`)
    expect(board.body).toMatchObject({ symbol: 'CURVE', venue: 'venue-a', description: 'meow', creatorAgent: { id: agentId } })
  })

  it('venue-b: the supply sits single-sided in an AMM pool whose LP is locked', async () => {
    const res = await api('POST', '/launch/venue-b', { agentId, symbol: 'POOL', name: 'Pool Dog', quote: 'USDC' }, { 'idempotency-key': key() })
    const live = await waitLive(res.body.id)
    expect(live.status).toBe('live')
    const client = app.services.chain!.publicClient
    const pool = live.poolAddress as Address
    expect(pool).toMatch(/^0x[0-9a-f]{40}$/)
    expect(await client.readContract({ address: live.tokenAddress, abi: erc20Abi, functionName: 'balanceOf', args: [pool] })).toBe(SUPPLY)
    const feeLocker = app.services.chain!.manifest.contracts.feeLocker
    const lp = await client.readContract({ address: pool, abi: AmmPairArtifact.abi, functionName: 'balanceOf', args: [feeLocker] })
    expect(lp).toBeGreaterThan(0n)
  })

  it('self-funded: the agent deploys the token and seeds the pool with its own USDC (approve + deploy)', async () => {
    const client = app.services.chain!.publicClient
    const usdc = app.services.chain!.manifest.contracts.usdc
    const before = await client.readContract({ address: usdc, abi: erc20Abi, functionName: 'balanceOf', args: [wallet] })
    const res = await api('POST', '/launch/self-funded', { agentId, symbol: 'SELF', name: 'Self Made', quote: 'USDC', seedAmount: '250' }, { 'idempotency-key': key() })
    const live = await waitLive(res.body.id)
    expect(live.status).toBe('live')
    const pool = live.poolAddress as Address
    expect(await client.readContract({ address: live.tokenAddress, abi: erc20Abi, functionName: 'balanceOf', args: [pool] })).toBe(SUPPLY)
    expect(await client.readContract({ address: usdc, abi: erc20Abi, functionName: 'balanceOf', args: [pool] })).toBe(250_000_000n)
    const after = await client.readContract({ address: usdc, abi: erc20Abi, functionName: 'balanceOf', args: [wallet] })
    expect(before - after).toBe(250_000_000n)
    const { rows } = await app.services.pool.query(`select kind, nonce from chain_tx where request_id like $1 || '%' order by nonce`, [res.body.id])
    expect(rows.map((r) => r.kind)).toEqual(['launch.approve', 'launch'])
    expect(Number(rows[1].nonce)).toBe(Number(rows[0].nonce) + 1)
  })

  it('a self-funded seed is money leaving the wallet: the policy caps it, and the kill switch stops any launch', async () => {
    const capped = await newAgent()
    await api('PATCH', `/agents/${capped.id}`, { policy: { max_trade_usd: '100' } })
    const res = await api('POST', '/launch/self-funded', { agentId: capped.id, symbol: 'BIG', name: 'Big Seed', quote: 'USDC', seedAmount: '250' }, { 'idempotency-key': key() })
    expect(res.status).toBe(403)
    expect(res.body.code).toBe('policy_violation')
    expect(res.body.error).toContain('max_trade_usd')
    await api('PATCH', `/agents/${capped.id}`, { policy: { max_trade_usd: '1000', paused: true } })
    const paused = await api('POST', '/launch/venue-a', { agentId: capped.id, symbol: 'OFF', name: 'Off', quote: 'ETH' }, { 'idempotency-key': key() })
    expect(paused.status).toBe(403)
    expect(paused.body.code).toBe('policy_violation')
    const { rowCount } = await app.services.pool.query('select 1 from chain_tx where agent_id = $1', [capped.id])
    expect(rowCount).toBe(0)
  })

  it('seeds count toward the 24-hour cap; the preview meets the same rules; token lists apply to the quote asset', async () => {
    const a = await newAgent()
    await api('PATCH', `/agents/${a.id}`, { policy: { max_trade_usd: '1000', max_daily_usd: '300' } })
    const seed = (symbol: string, seedAmount: string) => ({ agentId: a.id, symbol, name: symbol, quote: 'USDC', seedAmount })
    const preview = await api('POST', '/launch/preview', { venue: 'self-funded', ...seed('PRE', '2000') })
    expect(preview.status).toBe(403)
    expect(preview.body.error).toContain('max_trade_usd')
    const first = await api('POST', '/launch/self-funded', seed('SEED1', '250'), { 'idempotency-key': key() })
    expect(first.status).toBe(202)
    expect((await waitLive(first.body.id)).status).toBe('live')
    // $250 is spent today: another $100 seed would make $350 against a $300 cap.
    const second = await api('POST', '/launch/self-funded', seed('SEED2', '100'), { 'idempotency-key': key() })
    expect(second.status).toBe(403)
    expect(second.body.error).toContain('max_daily_usd')
    const { rows } = await app.services.pool.query(`select kind, usd_value::text as usd from wallet_op where agent_id = $1`, [a.id])
    expect(rows).toEqual([{ kind: 'launch', usd: '250.000000' }])
    await api('PATCH', `/agents/${a.id}`, { policy: { max_daily_usd: '10000', deny_tokens: ['eth'] } })
    const denied = await api('POST', '/launch/venue-a', { agentId: a.id, symbol: 'NOETH', name: 'No Eth', quote: 'ETH' }, { 'idempotency-key': key() })
    expect(denied.status).toBe(403)
    expect(denied.body.error).toContain('deny_tokens')
    const usdcLaunch = await api('POST', '/launch/venue-a', { agentId: a.id, symbol: 'YESUSD', name: 'Usd', quote: 'USDC' }, { 'idempotency-key': key() })
    expect(usdcLaunch.status).toBe(202)
  })

  it('self-funded without funds is 422 insufficient_funds before any transaction', async () => {
    const poor = await newAgent(false)
    const res = await api('POST', '/launch/self-funded', { agentId: poor.id, symbol: 'BROKE', name: 'Broke', quote: 'ETH' }, { 'idempotency-key': key() })
    expect(res.status).toBe(422)
    expect(res.body.code).toBe('insufficient_funds')
    const n = await app.services.chain!.publicClient.getTransactionCount({ address: poor.walletAddress })
    expect(n).toBe(0)
    const { rowCount } = await app.services.pool.query('select 1 from chain_tx where agent_id = $1', [poor.id])
    expect(rowCount).toBe(0)
  })
})

describe('validation and idempotency', () => {
  it('every bad field is named at once', async () => {
    const res = await api('POST', '/launch/venue-a', {
      agentId: 'nope', symbol: 'bad sym', name: 'x'.repeat(33), description: 'd'.repeat(1001), logoUrl: 'http://insecure.example/x.png', quote: 'ETH', extra: 1,
    }, { 'idempotency-key': key() })
    expect(res.status).toBe(422)
    expect(Object.keys(res.body.field_errors).sort()).toEqual(['agentId', 'description', 'extra', 'logoUrl', 'name', 'symbol'])
    const q = await api('POST', '/launch/venue-b', { agentId, symbol: 'OK', name: 'ok', quote: 'TSLAx' }, { 'idempotency-key': key() })
    expect(q.status).toBe(422)
    expect(q.body.field_errors).toHaveProperty('quote')
    const theirs = await other('POST', '/launch/venue-a', { agentId, symbol: 'OK', name: 'ok', quote: 'ETH' }, { 'idempotency-key': key() })
    expect(theirs.status).toBe(422)
    expect(theirs.body.field_errors).toHaveProperty('agentId')
    // Schema errors and the venue's and account's refusals come together in one answer.
    const both = await other('POST', '/launch/venue-b', { agentId, symbol: 'bad sym', name: 'ok', quote: 'TSLAx' }, { 'idempotency-key': key() })
    expect(both.status).toBe(422)
    expect(Object.keys(both.body.field_errors).sort()).toEqual(['agentId', 'quote', 'symbol'])
    const preview = await api('POST', '/launch/preview', { venue: 'venue-b', agentId, symbol: 'bad sym', name: 'ok', quote: 'TSLAx' })
    expect(Object.keys(preview.body.field_errors).sort()).toEqual(['quote', 'symbol'])
  })

  it('Idempotency-Key: missing 400, replay with the same launch id, another body 422, bad header 400', async () => {
    const body = { agentId, symbol: 'IDEM', name: 'Idem', quote: 'ETH' }
    const missing = await api('POST', '/launch/venue-a', body)
    expect(missing.status).toBe(400)
    expect(missing.body.code).toBe('idempotency_key_required')
    const k = key()
    const first = await api('POST', '/launch/venue-a', body, { 'idempotency-key': k })
    expect(first.status).toBe(202)
    const again = await api('POST', '/launch/venue-a', { ...body }, { 'idempotency-key': `"${k}"` })
    expect(again.status).toBe(202)
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    expect(again.body.id).toBe(first.body.id)
    // The replay's meta is its own (matching its X-Request-Id) and names the request it replays.
    expect(again.body.meta.requestId).toBe(again.headers.get('x-request-id'))
    expect(again.body.meta.replayOf).toBe(first.body.meta.requestId)
    const reused = await api('POST', '/launch/venue-a', { ...body, symbol: 'OTHER' }, { 'idempotency-key': k })
    expect(reused.status).toBe(422)
    expect(reused.body.code).toBe('idempotency_key_reused')
    const bad = await api('POST', '/launch/venue-a', body, { 'idempotency-key': 'x'.repeat(256) })
    expect(bad.status).toBe(400)
    expect(bad.body.code).toBe('invalid_header')
    await waitLive(first.body.id)
    expect((await other('GET', `/launch/${first.body.id}`)).status).toBe(404)
  })

  it('two concurrent identical requests with one key make one launch', async () => {
    const k = key()
    const body = { agentId, symbol: 'TWIN', name: 'Twin', quote: 'ETH' }
    const [a, b] = await Promise.all([
      api('POST', '/launch/venue-a', body, { 'idempotency-key': k }),
      api('POST', '/launch/venue-a', body, { 'idempotency-key': k }),
    ])
    const statuses = [a.status, b.status].sort()
    expect(statuses[0]).toBe(202)
    expect([202, 409]).toContain(statuses[1])
    const id = a.status === 202 ? a.body.id : b.body.id
    await waitLive(id)
    const { rows } = await app.services.pool.query(`select count(*)::int as n from actor where kind = 'launch' and snapshot->'context'->>'symbol' = 'TWIN'`)
    expect(rows[0].n).toBe(1)
    const { rows: txs } = await app.services.pool.query(`select count(*)::int as n from chain_tx where request_id like $1 || '%'`, [id])
    expect(txs[0].n).toBe(1)
  })

  it('concurrent launches from one wallet take contiguous nonces', async () => {
    const fresh = await newAgent()
    const results = await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        api('POST', '/launch/venue-a', { agentId: fresh.id, symbol: `N${i}`, name: `Nonce ${i}`, quote: 'ETH' }, { 'idempotency-key': key() }),
      ),
    )
    expect(results.map((r) => r.status)).toEqual([202, 202, 202, 202, 202])
    const lives = await Promise.all(results.map((r) => waitLive(r.body.id)))
    expect(lives.map((l) => l.status)).toEqual(['live', 'live', 'live', 'live', 'live'])
    const { rows } = await app.services.pool.query(`select nonce from chain_tx where agent_id = $1 order by nonce`, [fresh.id])
    expect(rows.map((r) => Number(r.nonce))).toEqual([0, 1, 2, 3, 4])
    expect(await app.services.chain!.publicClient.getTransactionCount({ address: fresh.walletAddress })).toBe(5)
  })
})

describe('preview and public data', () => {
  it('previews without sending anything', async () => {
    const before = await app.services.chain!.publicClient.getTransactionCount({ address: wallet })
    const res = await api('POST', '/launch/preview', { venue: 'venue-b', agentId, symbol: 'PREV', name: 'Preview', quote: 'ETH' })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({
      venue: 'venue-b', predictedTokenAddress: expect.stringMatching(/^0x[0-9a-f]{40}$/), totalSupply: '1000000000',
      gas: { limit: expect.any(String), costEth: expect.any(String), costUsd: expect.stringMatching(/^\d+\.\d{2}$/) },
      startingMarketCap: { quote: '5', usd: '15000.00' },
      // 5 ETH over a billion tokens: a fraction of a cent, shown in full rather than as "0.00".
      startingPrice: { quote: '0.000000005', usd: '0.000015' },
    })
    expect(await app.services.chain!.publicClient.getTransactionCount({ address: wallet })).toBe(before)
    const bad = await api('POST', '/launch/preview', { venue: 'venue-c', agentId, symbol: 'P', name: 'p', quote: 'ETH' })
    expect(bad.status).toBe(422)
    expect(bad.body.field_errors).toHaveProperty('venue')
  })

  it('quotes per venue, health with rpc and venues, faucet balances', async () => {
    const q = await api('GET', '/quotes?venue=venue-a')
    expect(q.body.quotes.map((x: { symbol: string }) => x.symbol)).toEqual(['ETH', 'USDC'])
    expect(q.body.quotes[0].logoUrl).toMatch(/^data:image\/svg\+xml/)
    // Addresses come out in lower case, as everywhere in the API.
    for (const quote of q.body.quotes) expect(quote.address).toMatch(/^0x[0-9a-f]{40}$/)
    const bad = await api('GET', '/quotes?venue=venue-z')
    expect(bad.status).toBe(422)
    expect(bad.body.field_errors).toHaveProperty('venue')
    const h = await api('GET', '/health')
    expect(h.body.rpc).toMatchObject({ configured: true, ok: true, chainId: 31337 })
    expect(h.body.venues.addresses['venue-a']).toMatch(/^0x[0-9a-f]{40}$/)
    const f = await api('POST', '/dev/faucet', { agentId, eth: '1' })
    expect(Number(f.body.balances.ETH)).toBeGreaterThan(1)
    expect((await other('POST', '/dev/faucet', { agentId, eth: '1' })).status).toBe(404)
  })
})

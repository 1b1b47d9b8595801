import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { erc20Abi, type Address } from 'viem'
import { startTestApp, type Api, type TestApp } from './support/app.ts'

let app: TestApp
let api: Api
let other: Api
let agentId: string
let wallet: Address
const friend = '0x00000000000000000000000000000000000f00d1' as Address
const stranger = '0x00000000000000000000000000000000000bad00' as Address

beforeAll(async () => {
  app = await startTestApp({}, { withChain: true })
  api = (await app.account()).api
  other = (await app.account({ name: 'other' })).api
  const a = await api('POST', '/agents', { name: 'payer', model: 'gpt-4o-mini', skills: ['wallet'] })
  agentId = a.body.id
  wallet = a.body.walletAddress
  await api('POST', '/dev/faucet', { agentId, eth: '5', usdc: '5000' })
  await api('POST', `/agents/${agentId}/whitelist`, { address: friend, label: 'friend' })
})
afterAll(async () => {
  await app?.close()
})

describe('whitelisted transfers', () => {
  it('sends USDC and ETH to a whitelisted address through the outbox', async () => {
    const client = app.services.chain!.publicClient
    const usdc = app.services.chain!.manifest.contracts.usdc
    const res = await api('POST', '/wallet/transfer', { agentId, to: friend, token: 'USDC', amount: '12.5' }, { 'idempotency-key': 't-1' })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ status: 'confirmed', kind: 'transfer', token: 'USDC', amount: '12.5', valueUsd: '12.50', txHash: expect.stringMatching(/^0x/) })
    expect(await client.readContract({ address: usdc, abi: erc20Abi, functionName: 'balanceOf', args: [friend] })).toBe(12_500_000n)
    const replay = await api('POST', '/wallet/transfer', { agentId, to: friend, token: 'USDC', amount: '12.5' }, { 'idempotency-key': 't-1' })
    expect(replay.headers.get('idempotent-replayed')).toBe('true')
    expect(replay.body.txHash).toBe(res.body.txHash)
    expect(await client.readContract({ address: usdc, abi: erc20Abi, functionName: 'balanceOf', args: [friend] })).toBe(12_500_000n)
    const eth = await api('POST', '/wallet/transfer', { agentId, to: friend, token: 'ETH', amount: '0.25' })
    expect(eth.body.status).toBe('confirmed')
    expect(await client.getBalance({ address: friend })).toBe(250_000_000_000_000_000n)
  })

  it('refuses an address not on the whitelist, one in its hold, and another account', async () => {
    const no = await api('POST', '/wallet/transfer', { agentId, to: stranger, token: 'USDC', amount: '1' })
    expect(no.status).toBe(403)
    expect(no.body.code).toBe('address_not_whitelisted')
    await api('POST', `/agents/${agentId}/whitelist`, { address: stranger })
    await app.services.pool.query(`update agent_whitelist set usable_at = now() + interval '1 day' where address = $1`, [stranger])
    const hold = await api('POST', '/wallet/transfer', { agentId, to: stranger, token: 'USDC', amount: '1' })
    expect(hold.status).toBe(403)
    expect(hold.body.code).toBe('address_in_cooldown')
    expect((await other('POST', '/wallet/transfer', { agentId, to: friend, token: 'USDC', amount: '1' })).status).toBe(404)
    const { rows } = await app.services.pool.query(`select count(*)::int as n from chain_tx where agent_id = $1 and to_address <> $2`, [agentId, app.services.chain!.manifest.contracts.usdc.toLowerCase()])
    expect(rows[0].n).toBe(1) // only the ETH transfer went anywhere but the USDC contract
  })

  it('refuses more than the balance, bad amounts, and what the policy caps', async () => {
    const broke = await api('POST', '/wallet/transfer', { agentId, to: friend, token: 'USDC', amount: '999999' })
    expect(broke.status).toBe(422)
    expect(broke.body.code).toBe('insufficient_funds')
    const decimals = await api('POST', '/wallet/transfer', { agentId, to: friend, token: 'USDC', amount: '1.1234567' })
    expect(decimals.status).toBe(422)
    expect(decimals.body.field_errors).toHaveProperty('amount')
    const bad = await api('POST', '/wallet/transfer', { agentId, to: 'nope', token: '', amount: '-1' })
    expect(Object.keys(bad.body.field_errors).sort()).toEqual(['amount', 'to', 'token'])
    await api('PATCH', `/agents/${agentId}`, { policy: { max_trade_usd: '10' } })
    const capped = await api('POST', '/wallet/transfer', { agentId, to: friend, token: 'USDC', amount: '10.01' })
    expect(capped.status).toBe(403)
    expect(capped.body).toMatchObject({ code: 'policy_violation' })
    expect(capped.body.error).toContain('max_trade_usd')
    const fine = await api('POST', '/wallet/transfer', { agentId, to: friend, token: 'USDC', amount: '10' })
    expect(fine.body.status).toBe('confirmed')
    await api('PATCH', `/agents/${agentId}`, { policy: { max_trade_usd: '1000', paused: true } })
    const paused = await api('POST', '/wallet/transfer', { agentId, to: friend, token: 'USDC', amount: '1' })
    expect(paused.status).toBe(403)
    expect(paused.body.error).toContain('paused')
    await api('PATCH', `/agents/${agentId}`, { policy: { paused: false } })
  })
})

describe('portfolio and transactions', () => {
  it('values ETH and USDC in USD with a total', async () => {
    const res = await api('GET', `/wallet/portfolio?agentId=${agentId}`)
    expect(res.status).toBe(200)
    const usdc = res.body.holdings.find((h: { symbol: string }) => h.symbol === 'USDC')
    expect(usdc).toMatchObject({ balance: '4977.5', priceUsd: '1', valueUsd: '4977.50', verified: true })
    const eth = res.body.holdings.find((h: { symbol: string }) => h.symbol === 'ETH')
    expect(Number(eth.balance)).toBeGreaterThan(4.7)
    expect(Number(eth.priceUsd)).toBeCloseTo(3000, 0)
    expect(Number(res.body.totalValueUsd)).toBeCloseTo(Number(usdc.valueUsd) + Number(eth.valueUsd), 1)
    expect(res.body.walletAddress).toBe(wallet)
    expect((await api('GET', '/wallet/portfolio')).status).toBe(422)
    expect((await other('GET', `/wallet/portfolio?agentId=${agentId}`)).status).toBe(404)
  })

  it('lists the outbox newest first with nonces and states', async () => {
    const res = await api('GET', `/agents/${agentId}/transactions?limit=2`)
    expect(res.status).toBe(200)
    expect(res.body.transactions).toHaveLength(2)
    expect(res.body.transactions[0]).toMatchObject({ kind: 'transfer', status: 'confirmed', hash: expect.stringMatching(/^0x/) })
    const all = await api('GET', `/agents/${agentId}/transactions?limit=2&cursor=${res.body.nextCursor}`)
    const nonces = [...res.body.transactions, ...all.body.transactions].map((t: { nonce: number }) => t.nonce)
    expect(nonces).toEqual([...nonces].sort((a, b) => b - a))
    expect((await other('GET', `/agents/${agentId}/transactions`)).status).toBe(404)
  })
})

describe('retries after a crash', () => {
  it('a keyed retry whose stored answer was lost finds the transfer already made, even with the funds spent', async () => {
    const a = await api('POST', '/agents', { name: 'once', model: 'gpt-4o-mini', skills: [] })
    await api('POST', '/dev/faucet', { agentId: a.body.id, eth: '1', usdc: '10' })
    await api('POST', `/agents/${a.body.id}/whitelist`, { address: friend })
    const body = { agentId: a.body.id, to: friend, token: 'USDC', amount: '10' }
    const first = await api('POST', '/wallet/transfer', body, { 'idempotency-key': 'crash-retry' })
    expect(first.body.status).toBe('confirmed')
    // The crash window: the transfer happened but its answer was never stored.
    await app.services.pool.query(`delete from idempotency_key where key = 'crash-retry'`)
    const retry = await api('POST', '/wallet/transfer', body, { 'idempotency-key': 'crash-retry' })
    expect(retry.status).toBe(200)
    expect(retry.body).toMatchObject({ id: first.body.id, txHash: first.body.txHash, status: 'confirmed' })
    // The same key with another body is refused, not answered with the first transfer.
    await app.services.pool.query(`delete from idempotency_key where key = 'crash-retry'`)
    const other = await api('POST', '/wallet/transfer', { ...body, amount: '5' }, { 'idempotency-key': 'crash-retry' })
    expect(other.status).toBe(422)
    expect(other.body.code).toBe('idempotency_key_reused')
    const { rows } = await app.services.pool.query(`select count(*)::int as n from chain_tx where agent_id = $1`, [a.body.id])
    expect(rows[0].n).toBe(1)
  })
})

describe('the 24-hour cap under concurrency', () => {
  it('five concurrent $10 transfers against a $25 daily cap: exactly two go through', async () => {
    const a = await api('POST', '/agents', { name: 'capped', model: 'gpt-4o-mini', skills: [], policy: { max_daily_usd: '25' } })
    await api('POST', '/dev/faucet', { agentId: a.body.id, eth: '1', usdc: '100' })
    await api('POST', `/agents/${a.body.id}/whitelist`, { address: friend })
    const results = await Promise.all(
      Array.from({ length: 5 }, () => api('POST', '/wallet/transfer', { agentId: a.body.id, to: friend, token: 'USDC', amount: '10' })),
    )
    const ok = results.filter((r) => r.status === 200 && r.body.status === 'confirmed')
    const refused = results.filter((r) => r.status === 403)
    expect(ok).toHaveLength(2)
    expect(refused).toHaveLength(3)
    for (const r of refused) expect(r.body.error).toContain('max_daily_usd')
    const { rows } = await app.services.pool.query(`select count(*)::int as n from chain_tx where agent_id = $1`, [a.body.id])
    expect(rows[0].n).toBe(2)
  })
})

describe('the dev faucet', () => {
  it('five concurrent top-ups of one wallet all land: +5 ETH and +50 USDC', async () => {
    const a = await api('POST', '/agents', { name: 'thirsty', model: 'gpt-4o-mini', skills: [] })
    const results = await Promise.all(Array.from({ length: 5 }, () => api('POST', '/dev/faucet', { agentId: a.body.id, eth: '1', usdc: '10' })))
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200, 200])
    const client = app.services.chain!.publicClient
    expect(await client.getBalance({ address: a.body.walletAddress })).toBe(5n * 10n ** 18n)
    const usdc = app.services.chain!.manifest.contracts.usdc
    expect(await client.readContract({ address: usdc, abi: erc20Abi, functionName: 'balanceOf', args: [a.body.walletAddress] })).toBe(50_000_000n)
  })
})

describe('portfolio', () => {
  it('lists a token the wallet only received by a plain transfer from another wallet', async () => {
    const res = await api('POST', '/launch/venue-a', { agentId, symbol: 'GIFT', name: 'Gift', quote: 'ETH' }, { 'idempotency-key': 'gift-launch' })
    let launch = res.body
    for (const until = Date.now() + 20_000; launch.status !== 'live' && launch.status !== 'failed' && Date.now() < until; ) {
      await new Promise((r) => setTimeout(r, 50))
      launch = (await api('GET', `/launch/${res.body.id}`)).body
    }
    expect(launch.status).toBe('live')
    const bought = await api('POST', '/swap/execute', { agentId, tokenIn: 'ETH', tokenOut: launch.tokenAddress, amountIn: '0.01', slippageBps: 500, acknowledgeUnverified: true })
    expect(bought.body.status).toBe('confirmed')
    const receiver = await api('POST', '/agents', { name: 'receiver', model: 'gpt-4o-mini', skills: [] })
    const before = await api('GET', `/wallet/portfolio?agentId=${receiver.body.id}`)
    expect(before.body.holdings.map((h: { symbol: string }) => h.symbol)).not.toContain('GIFT')
    await api('POST', `/agents/${agentId}/whitelist`, { address: receiver.body.walletAddress })
    const sent = await api('POST', '/wallet/transfer', { agentId, to: receiver.body.walletAddress, token: launch.tokenAddress, amount: '1000' })
    expect(sent.body.status).toBe('confirmed')
    const after = await api('GET', `/wallet/portfolio?agentId=${receiver.body.id}`)
    expect(after.status).toBe(200)
    expect(after.body.holdings).toContainEqual(expect.objectContaining({ symbol: 'GIFT', address: launch.tokenAddress, balance: '1000', verified: false }))
    const { rows } = await app.services.pool.query(`select token_address from agent_received_token where agent_id = $1`, [receiver.body.id])
    expect(rows).toEqual([{ token_address: launch.tokenAddress }])
  })
})

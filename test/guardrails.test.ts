import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Address } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { apiClient, startTestApp, type Api, type TestApp } from './support/app.ts'
import { walletClientFor } from '../src/adapters/chain/chain.ts'
import { BondingCurveLaunchpadArtifact } from '../src/dev/artifacts/index.ts'

// A short hold, so a loosening can be seen pending and then in effect.
const HOLD_SECONDS = 3

let app: TestApp
let owner: Api
let trader: Api
let reader: Api
let ownerKeyId: string
let m: NonNullable<TestApp['services']['chain']>['manifest']
const payout = '0x5555555555555555555555555555555555555555'
const key = () => `k-${Math.random().toString(36).slice(2)}`
const q = (sql: string, params: unknown[] = []) => app.services.pool.query(sql, params).then((r) => r.rows)

/** The app's warnings and errors, shown when a step of an outside launch does not end in time. */
const logLines: string[] = []

/** `work`, or an error naming `what` (with the app's last warnings) after `ms`. */
async function within<T>(what: string, ms: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not done in ${ms} ms; the app's last warnings:\n${logLines.slice(-20).join('')}`)), ms)
  })
  try {
    return await Promise.race([work, late])
  } finally {
    clearTimeout(timer)
  }
}

/** Polls until `check` returns a value (not undefined); fails after `ms`. */
async function until<T>(what: string, check: () => Promise<T | undefined>, ms = 15_000): Promise<T> {
  const end = Date.now() + ms
  for (;;) {
    const v = await check()
    if (v !== undefined) return v
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

async function newAgent(body: object = {}) {
  const res = await owner('POST', '/agents', { name: 'guarded', model: 'gpt-4o-mini', skills: [], ...body })
  expect(res.status).toBe(201)
  return res.body as { id: string; walletAddress: Address; policy: Record<string, unknown> }
}

/** A token launched straight on the venue contract by a wallet of no account: anyone can name it anything. */
async function outsideLaunch(symbol: string): Promise<string> {
  const chain = app.services.chain!
  const outsiderKey = generatePrivateKey()
  const step = <T>(what: string, ms: number, work: Promise<T>) => within(`outside launch of ${symbol}: ${what}`, ms, work)
  await step('funding', 20_000, chain.publicClient.request({ method: 'anvil_setBalance' as never, params: [privateKeyToAccount(outsiderKey).address, '0x3635C9ADC5DEA00000'] as never }))
  const wallet = walletClientFor(chain, outsiderKey)
  const hash = await step('sending', 30_000, wallet.writeContract({
    chain: chain.chain, account: wallet.account!, address: m.contracts.venueA, abi: BondingCurveLaunchpadArtifact.abi,
    functionName: 'createToken', args: [`Totally ${symbol}`, symbol, m.contracts.weth],
    gas: 6_000_000n,
  }))
  const receipt = await step('its receipt', 30_000, chain.publicClient.waitForTransactionReceipt({ hash, pollingInterval: 20 }))
  expect(receipt.status).toBe('success')
  // Read-your-writes: the indexer says when it has indexed the launch's block (a loaded machine may take long).
  const indexed = await app.services.indexer!.waitForBlock(receipt.blockNumber, { timeoutMs: 60_000 })
  if (!indexed) throw new Error(`outside launch of ${symbol}: block ${receipt.blockNumber} not indexed in 60 s; the app's last warnings:\n${logLines.slice(-20).join('')}`)
  return until(`the indexer to list ${symbol}`, async () => {
    const rows = await q(`select address from token where tx_hash = $1`, [hash])
    return rows[0]?.address as string | undefined
  })
}

beforeAll(async () => {
  app = await startTestApp({ WHITELIST_HOLD_SECONDS: String(HOLD_SECONDS), LOG_LEVEL: 'warn' }, { withChain: true, logLines })
  owner = (await app.account()).api
  m = app.services.chain!.manifest
  ownerKeyId = (await owner('GET', '/keys')).body.keys[0].id
  const base = `${app.url}/api/v1`
  trader = apiClient(base, (await owner('POST', '/keys', { name: 'model', scopes: ['read', 'trade'] })).body.key)
  reader = apiClient(base, (await owner('POST', '/keys', { name: 'ro', scopes: ['read'] })).body.key)
}, 120_000)
afterAll(async () => {
  await app?.close()
})

describe('who may change the guardrails', () => {
  it('a trade or read key cannot loosen a policy, unpause, change the payout wallet, or tighten either; nothing is written', async () => {
    const agent = await newAgent({ policy: { max_trade_usd: '10', paused: true } })
    const before = await q('select policy, payout_wallet, name, updated_at from agent where id = $1', [agent.id])
    const attempts: Array<[Api, string, object]> = [
      [trader, 'PATCH', { policy: { paused: false } }],
      [trader, 'PATCH', { policy: { max_trade_usd: '999999999' } }],
      [trader, 'POST', { payout_wallet: payout }],
      [trader, 'PATCH', { name: 'sneaky', policy: { max_trade_usd: '5' } }],
      [reader, 'PATCH', { policy: { paused: false } }],
    ]
    for (const [api, method, body] of attempts) {
      const res = await api(method, `/agents/${agent.id}`, body)
      expect({ body, status: res.status, code: res.body.code }).toEqual({ body, status: 403, code: 'forbidden' })
    }
    expect(await q('select policy, payout_wallet, name, updated_at from agent where id = $1', [agent.id])).toEqual(before)
    expect(await q('select * from audit_log where subject_id = $1', [agent.id])).toEqual([])
    expect(await q('select * from agent_pending_change where agent_id = $1', [agent.id])).toEqual([])
    // Other fields keep their scope.
    const renamed = await trader('PATCH', `/agents/${agent.id}`, { name: 'renamed' })
    expect(renamed.status).toBe(200)
    expect(renamed.body).toMatchObject({ name: 'renamed', policy: { paused: true, maxTradeUsd: '10' }, pendingChanges: [] })
  })

  it('an admin key: tightening is immediate, loosening is pending for the hold and journaled, then applies to swaps and the payout', async () => {
    const agent = await newAgent({ policy: { paused: true, max_trade_usd: '10' } })
    expect((await owner('POST', '/dev/faucet', { agentId: agent.id, eth: '1', usdc: '0' })).status).toBe(200)
    const t0 = Date.now()
    const res = await owner('PATCH', `/agents/${agent.id}`, { policy: { paused: false, max_trade_usd: '1000', max_daily_usd: '50' }, payout_wallet: payout })
    expect(res.status).toBe(200)
    // The cap that tightens applies now; unpausing, the higher cap and the payout wallet wait.
    expect(res.body).toMatchObject({ payoutWallet: null, policy: { paused: true, maxTradeUsd: '10', maxDailyUsd: '50' } })
    expect(res.body.pendingChanges).toEqual([{ changes: { maxTradeUsd: '1000', paused: false, payoutWallet: payout }, effectiveAt: expect.any(String) }])
    const effectiveAt = Date.parse(res.body.pendingChanges[0].effectiveAt)
    expect(effectiveAt).toBeGreaterThanOrEqual(t0 + HOLD_SECONDS * 1000 - 1500)
    expect(effectiveAt).toBeLessThanOrEqual(Date.now() + HOLD_SECONDS * 1000 + 1500)

    const swap = () => owner('POST', '/swap/execute', { agentId: agent.id, tokenIn: 'ETH', tokenOut: 'USDC', amountIn: '0.001', slippageBps: 300 })
    const held = await swap()
    expect(held.status).toBe(403)
    expect(held.body.error).toContain('"paused"')
    expect((await owner('GET', `/fees/earnings?agentId=${agent.id}`)).body.payoutAddress).toBe(agent.walletAddress)

    const audit = await owner('GET', `/agents/${agent.id}/audit`)
    expect(audit.status).toBe(200)
    const actor = { type: 'key', keyId: ownerKeyId }
    expect(audit.body.entries).toMatchObject([
      { action: 'payout_wallet.change', actor, before: { payout_wallet: null }, after: { payout_wallet: payout }, effectiveAt: res.body.pendingChanges[0].effectiveAt },
      { action: 'policy.change', actor, before: { max_trade_usd: '10', paused: true }, after: { max_trade_usd: '1000', paused: false }, effectiveAt: res.body.pendingChanges[0].effectiveAt },
      { action: 'policy.change', actor, before: { max_daily_usd: '10000' }, after: { max_daily_usd: '50' } },
    ])
    const immediate = audit.body.entries[2]
    expect(immediate.effectiveAt).toBe(immediate.at)
    expect(audit.body.nextCursor).toBeNull()
    // Paged newest first; operators read every account's trail.
    const page1 = await owner('GET', `/agents/${agent.id}/audit?limit=2`)
    const page2 = await owner('GET', `/agents/${agent.id}/audit?limit=2&cursor=${page1.body.nextCursor}`)
    expect([...page1.body.entries, ...page2.body.entries].map((e: { id: string }) => e.id)).toEqual(audit.body.entries.map((e: { id: string }) => e.id))
    const op = await app.account({ operator: true, name: 'op' })
    const ops = await op.api('GET', `/ops/audit?subjectId=${agent.id}`)
    expect(ops.body.entries.map((e: { id: string }) => e.id)).toEqual(audit.body.entries.map((e: { id: string }) => e.id))
    expect((await owner('GET', `/ops/audit`)).status).toBe(403)

    // Once the hold has passed (by the database clock), the agent, swaps and the payout see it.
    const live = await until('the pending change to apply', async () => {
      const r = await owner('GET', `/agents/${agent.id}`)
      return r.body.pendingChanges.length === 0 ? r.body : undefined
    })
    expect(Date.now()).toBeGreaterThanOrEqual(effectiveAt - 50)
    expect(live).toMatchObject({ payoutWallet: payout, policy: { paused: false, maxTradeUsd: '1000', maxDailyUsd: '50' } })
    expect((await swap()).body.status).toBe('confirmed')
    expect((await owner('GET', `/fees/earnings?agentId=${agent.id}`)).body.payoutAddress).toBe(payout)
  })

  it('a later tightening is not undone when an earlier pending loosening matures', async () => {
    const agent = await newAgent({ policy: { max_trade_usd: '10', deny_tokens: ['TSLAx'] } })
    const first = await owner('PATCH', `/agents/${agent.id}`, { policy: { max_trade_usd: '1000', max_price_impact_bps: 3000, deny_tokens: [] } })
    expect(first.body.pendingChanges[0].changes).toEqual({ maxTradeUsd: '1000', maxPriceImpactBps: 3000, denyTokens: [] })
    // Tightening the cap (and denying more) applies now and drops the pending change of the same fields.
    const tsla = m.stocks.find((s) => s.symbol === 'TSLAx')!.address.toLowerCase()
    const second = await owner('PATCH', `/agents/${agent.id}`, { policy: { max_trade_usd: '5', deny_tokens: ['TSLAx', 'NVDAx'] } })
    const nvda = m.stocks.find((s) => s.symbol === 'NVDAx')!.address.toLowerCase()
    expect(second.body.policy).toMatchObject({ maxTradeUsd: '5', denyTokens: [tsla, nvda] })
    expect(second.body.pendingChanges).toEqual([{ changes: { maxPriceImpactBps: 3000 }, effectiveAt: first.body.pendingChanges[0].effectiveAt }])
    const live = await until('the pending change to apply', async () => {
      const r = await owner('GET', `/agents/${agent.id}`)
      return r.body.pendingChanges.length === 0 ? r.body : undefined
    })
    expect(live.policy).toMatchObject({ maxTradeUsd: '5', maxPriceImpactBps: 3000, denyTokens: [tsla, nvda] })
    const audit = (await owner('GET', `/agents/${agent.id}/audit`)).body.entries
    expect(audit[0]).toMatchObject({ action: 'policy.change', before: { max_trade_usd: '10', deny_tokens: [tsla] }, after: { max_trade_usd: '5', deny_tokens: [tsla, nvda] } })
    expect(audit[1]).toMatchObject({ action: 'pending.cancel', before: { max_trade_usd: '1000', deny_tokens: [] }, after: null })
    // The next update folds the matured change into the stored row.
    await owner('PATCH', `/agents/${agent.id}`, { policy: { paused: true } })
    expect((await q('select policy from agent where id = $1', [agent.id]))[0].policy).toMatchObject({ max_trade_usd: '5', max_price_impact_bps: 3000, paused: true })
    expect(await q('select * from agent_pending_change where agent_id = $1', [agent.id])).toEqual([])
  })
})

describe('token lists hold addresses', () => {
  let fakeUsdc: string
  let fakeWeth: string
  let shady: string
  const weth = () => m.contracts.weth.toLowerCase()
  const usdc = () => m.contracts.usdc.toLowerCase()
  beforeAll(async () => {
    // One after another: anvil's automine can leave one of several transactions sent at the same
    // moment in its pool, unmined until another comes (foundry-rs/foundry#10122), and nothing else
    // is sent here. (The service's own sender replaces a transaction not mined in time.)
    fakeUsdc = await outsideLaunch('USDC')
    fakeWeth = await outsideLaunch('WETH')
    shady = await outsideLaunch('SHADY')
  }, 170_000)

  it('symbols resolve once, to verified tokens only; a look-alike never passes an allow list nor escapes a deny list', async () => {
    const allowing = await newAgent({ policy: { allow_tokens: ['ETH', 'USDC', 'weth'] } })
    expect(allowing.policy.allowTokens).toEqual([weth(), usdc()])
    const body = { agentId: allowing.id, tokenIn: 'ETH', tokenOut: fakeUsdc, amountIn: '0.01', slippageBps: 300, acknowledgeUnverified: true }
    for (const path of ['/swap/quote', '/swap/execute']) {
      const res = await owner('POST', path, body)
      expect({ path, status: res.status, code: res.body.code }).toEqual({ path, status: 403, code: 'policy_violation' })
      expect(res.body.error).toContain('"allow_tokens"')
    }
    // A symbol in a swap body names the verified token, never a look-alike.
    const real = await owner('POST', '/swap/quote', { ...body, tokenOut: 'USDC' })
    expect(real.status).toBe(200)
    expect(real.body.tokenOut).toMatchObject({ address: usdc(), verified: true })
    const wethQuote = await owner('POST', '/swap/quote', { ...body, tokenIn: 'WETH', tokenOut: 'USDC' })
    expect(wethQuote.body.tokenIn.address).toBe(weth())

    const denying = await newAgent({ policy: { deny_tokens: [fakeWeth.toUpperCase().replace('0X', '0x')] } })
    expect(denying.policy.denyTokens).toEqual([fakeWeth])
    const denied = await owner('POST', '/swap/quote', { ...body, agentId: denying.id, tokenOut: fakeWeth })
    expect(denied.status).toBe(403)
    expect(denied.body.error).toContain('"deny_tokens"')

    // A symbol that only unverified tokens carry is refused, in a policy and in a swap body.
    const bad = await owner('PATCH', `/agents/${denying.id}`, { policy: { deny_tokens: ['SHADY'], allow_tokens: ['ETH', 'NOSUCH'] } })
    expect(bad.status).toBe(422)
    expect(Object.keys(bad.body.field_errors).sort()).toEqual(['policy.allow_tokens.1', 'policy.deny_tokens.0'])
    expect((await owner('GET', `/agents/${denying.id}`)).body.policy.denyTokens).toEqual([fakeWeth])
    const byAddressOnly = await owner('POST', '/swap/quote', { ...body, agentId: denying.id, tokenOut: 'SHADY' })
    expect(byAddressOnly.status).toBe(422)
    expect(Object.keys(byAddressOnly.body.field_errors)).toEqual(['tokenOut'])
    expect((await owner('POST', '/swap/quote', { ...body, agentId: denying.id, tokenOut: shady })).status).toBe(200)
  })

  it('ETH and WETH are one asset for every list', async () => {
    const noWeth = await newAgent({ policy: { deny_tokens: ['WETH'] } })
    const eth = await owner('POST', '/swap/execute', { agentId: noWeth.id, tokenIn: 'ETH', tokenOut: 'USDC', amountIn: '0.01', slippageBps: 300 })
    expect(eth.status).toBe(403)
    expect(eth.body.error).toContain('"deny_tokens"')
    const noEth = await newAgent({ policy: { deny_tokens: ['ETH'] } })
    const wethQuote = await owner('POST', '/swap/quote', { agentId: noEth.id, tokenIn: 'WETH', tokenOut: 'USDC', amountIn: '0.01', slippageBps: 300 })
    expect(wethQuote.status).toBe(403)
    expect(wethQuote.body.error).toContain('"deny_tokens"')
    expect(await q(`select count(*)::int as n from chain_tx where agent_id in ($1, $2)`, [noWeth.id, noEth.id])).toEqual([{ n: 0 }])
  })

  it('a launch cannot take the symbol of a verified asset', async () => {
    const agent = await newAgent()
    const stock = m.stocks[0]!.symbol.toUpperCase()
    for (const symbol of ['USDC', 'WETH', 'ETH', stock]) {
      const res = await owner('POST', '/launch/venue-a', { agentId: agent.id, symbol, name: 'Copy', quote: 'ETH' }, { 'idempotency-key': key() })
      expect({ symbol, status: res.status, fields: Object.keys(res.body.field_errors ?? {}) }).toEqual({ symbol, status: 422, fields: ['symbol'] })
    }
    // An operator-verified launch's symbol is taken too.
    const op = await app.account({ operator: true, name: 'op2' })
    expect((await op.api('POST', `/ops/tokens/${shady}/verified`, { verified: true })).status).toBe(200)
    const res = await owner('POST', '/launch/venue-a', { agentId: agent.id, symbol: 'SHADY', name: 'Copy', quote: 'ETH' }, { 'idempotency-key': key() })
    expect(res.status).toBe(422)
    expect(res.body.field_errors).toHaveProperty('symbol')
    expect(await q(`select count(*)::int as n from chain_tx where agent_id = $1`, [agent.id])).toEqual([{ n: 0 }])
  })
})

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createWalletClient, http } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { planLaunch } from '../src/chain/launchTx.ts'
import { startTestApp, type Api, type TestApp } from './support/app.ts'
import { waitFor } from './support/waitFor.ts'
import { automationUntil } from './support/automations.ts'

/**
 * Automations fired by the chain, as the indexer adds blocks: a limit order fires once when a swap
 * from another wallet pushes the price across; a sniper buys a matching launch and ignores one
 * that does not match. Real app, Postgres and anvil (each transaction is a block).
 */
let app: TestApp
let api: Api
let launcher: string
let whale: string

const q = async (sql: string, values: unknown[] = []) => (await app.services.pool.query(sql, values)).rows
const blockOf = async (hash: string) => Number((await app.services.chain!.publicClient.getTransactionReceipt({ hash: hash as `0x${string}` })).blockNumber)

const until = (id: string, done: (a: any) => boolean, timeoutMs?: number) => automationUntil(api, id, done, timeoutMs)

async function agent(name: string, skills: string[], eth = '5') {
  const id = (await api('POST', '/agents', { name, skills })).body.id as string
  expect((await api('POST', '/dev/faucet', { agentId: id, eth })).status).toBe(200)
  expect((await api('POST', `/agents/${id}/start`)).status).toBe(200)
  return id
}

async function launch(symbol: string) {
  const res = await api('POST', '/launch/venue-a', { agentId: launcher, symbol, name: symbol, quote: 'ETH' }, { 'idempotency-key': `launch-${symbol}` })
  let l: any
  await waitFor(async () => (l = (await api('GET', `/launch/${res.body.id}`)).body).status === 'live', 30_000)
  return l as { tokenAddress: string; txHash: string }
}

/** anvil's third dev account: launches straight on the chain, from a wallet the service does not manage. */
const OUTSIDER_KEY = '0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a'

/** Sends a venue-a launch of `symbol` to the chain and answers its hash (mined by the caller when automine is off). */
async function sendLaunch(symbol: string) {
  const { chain, rpcUrl, manifest, publicClient } = app.services.chain!
  const account = privateKeyToAccount(OUTSIDER_KEY)
  const nonce = await publicClient.getTransactionCount({ address: account.address, blockTag: 'pending' })
  const [tx] = planLaunch(manifest, { venue: 'venue-a', symbol, name: symbol, quote: 'ETH', seedAmount: null }, account.address, nonce)
  return createWalletClient({ account, chain, transport: http(rpcUrl) }).sendTransaction({ to: tx!.to, data: tx!.data, nonce, gas: 5_000_000n })
}
const rpc = (method: string, params: unknown[] = []) => app.services.chain!.publicClient.request({ method: method as never, params: params as never })

beforeAll(async () => {
  app = await startTestApp({ AUTOMATION_MIN_INTERVAL_SECONDS: '1' }, { withChain: true })
  ;({ api } = await app.account())
  launcher = await agent('launcher', ['token-launch'])
  whale = await agent('whale', ['trading'], '20')
})
afterAll(async () => {
  await app?.close()
})

describe('automations fired by the chain', () => {
  it('a limit order fires once, within two blocks of the swap that pushed the price across', async () => {
    const token = (await launch('LIMITCAT')).tokenAddress
    const buyer = await agent('limit-buyer', ['trading'])
    const [price] = (await api('GET', `/price?tokens=${token}`)).body.prices
    const threshold = (Number(price.priceUsd) * 1.05).toPrecision(6)
    const created = await api('POST', '/automations', {
      agent_id: buyer, name: 'breakout', kind: 'limit',
      limit: { tokenIn: 'ETH', tokenOut: token, mint: token, amountIn: '0.01', operator: 'gte', priceUsd: threshold, slippageBps: 500, acknowledgeUnverified: true },
    })
    expect(created.status, JSON.stringify(created.body)).toBe(201)
    expect(created.body).toMatchObject({ kind: 'limit', status: 'armed', triggerType: 'price_threshold', triggerOnce: true, trigger: { mint: token, operator: 'gte' } })

    // Another wallet's buy pushes the price over the threshold.
    const push = await api('POST', '/swap/execute', { agentId: whale, tokenIn: 'ETH', tokenOut: token, amountIn: '0.2', slippageBps: 5000, acknowledgeUnverified: true })
    expect(push.body.status, JSON.stringify(push.body)).toBe('confirmed')
    expect(Number((await api('GET', `/price?tokens=${token}`)).body.prices[0].priceUsd)).toBeGreaterThanOrEqual(Number(threshold))

    const done = await until(created.body.id, (a) => a.status === 'completed')
    expect(done).toMatchObject({ runCount: 1, completedReason: 'fired_once' })
    expect(done.firings).toMatchObject([{ number: 1, source: 'price', outcome: 'ok', txHash: expect.any(String) }])
    expect(await blockOf(done.firings[0].txHash)).toBeLessThanOrEqual((await blockOf(push.body.txHash)) + 2)
    // Later blocks above the threshold fire nothing more.
    await api('POST', '/swap/execute', { agentId: whale, tokenIn: 'ETH', tokenOut: token, amountIn: '0.1', slippageBps: 5000, acknowledgeUnverified: true })
    await app.services.indexer!.syncOnce()
    expect((await q(`select count(*)::int as n from wallet_op where parent_id = $1`, [created.body.id]))[0].n).toBe(1)
  })

  it('a sniper buys a matching venue-a launch within two blocks and ignores one that does not match', async () => {
    const sniper = await agent('sniper', ['trading'])
    const created = await api('POST', '/automations', {
      agent_id: sniper, name: 'moon sniper', kind: 'sniper',
      sniper: { quote: 'ETH', amountIn: '0.01', maxBuys: 1, venue: 'venue-a', symbolPattern: 'MOON*', slippageBps: 2000 },
    })
    expect(created.status, JSON.stringify(created.body)).toBe(201)
    expect(created.body).toMatchObject({ kind: 'sniper', status: 'armed', triggerType: 'new_launch', maxFirings: 1 })

    const ignored = await launch('NOTIT')
    const moon = await launch('MOONCAT')
    const done = await until(created.body.id, (a) => a.status === 'completed')
    expect(done).toMatchObject({ runCount: 1, completedReason: 'max_firings_reached' })
    expect(done.firings).toMatchObject([{ number: 1, source: 'launch', outcome: 'ok' }])
    expect(await blockOf(done.firings[0].txHash)).toBeLessThanOrEqual((await blockOf(moon.txHash)) + 2)
    const bought = await q(`select x.snapshot->'context'->'params'->>'tokenOut' as token from wallet_op w join actor x on x.id = w.id where w.parent_id = $1`, [created.body.id])
    expect(bought.map((b) => b.token)).toEqual([moon.tokenAddress.toLowerCase()])
    expect(bought.map((b) => b.token)).not.toContain(ignored.tokenAddress.toLowerCase())
  })
  it('a launch mined while the sniper is executing a firing is bought after that firing', async () => {
    const sniper = await agent('busy-sniper', ['trading'])
    const wallet = (await api('GET', `/agents/${sniper}`)).body.walletAddress as `0x${string}`
    const created = await api('POST', '/automations', {
      agent_id: sniper, name: 'busy sniper', kind: 'sniper',
      sniper: { quote: 'ETH', amountIn: '0.01', maxBuys: 2, venue: 'venue-a', symbolPattern: 'BUSY*', slippageBps: 2000 },
    })
    expect(created.status, JSON.stringify(created.body)).toBe(201)
    const { publicClient } = app.services.chain!
    // Blocks are mined by hand: the first launch's block starts firing 1, whose swap then waits
    // in the mempool (the automation is executing) until the block that also holds the second launch.
    await rpc('evm_setAutomine', [false])
    try {
      await sendLaunch('BUSYONE')
      await rpc('evm_mine')
      const sent = async () => (await publicClient.getTransactionCount({ address: wallet, blockTag: 'pending' })) > (await publicClient.getTransactionCount({ address: wallet }))
      await waitFor(sent, 30_000)
      expect((await api('GET', `/automations/${created.body.id}`)).body.status).toBe('executing')
      await sendLaunch('BUSYTWO')
      await rpc('evm_mine')
    } finally {
      await rpc('evm_setAutomine', [true])
    }
    // Firing 2 (the launch that came during firing 1) follows once firing 1 ends.
    const done = await until(created.body.id, (a) => a.status === 'completed')
    expect(done).toMatchObject({ status: 'completed', runCount: 2, completedReason: 'max_firings_reached' })
    const tokens = await q(`select address from token where symbol in ('BUSYONE', 'BUSYTWO') order by block_number`)
    const bought = await q(`select x.snapshot->'context'->'params'->>'tokenOut' as token from wallet_op w join actor x on x.id = w.id where w.parent_id = $1 order by w.created_at`, [created.body.id])
    expect(bought.map((b) => b.token)).toEqual(tokens.map((t) => t.address.toLowerCase()))
  })
})

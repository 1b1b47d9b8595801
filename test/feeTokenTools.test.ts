import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createWalletClient, erc20Abi, http, parseEther, type Address } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { startTestApp, waitForLaunchEnd, type Api, type TestApp } from './support/app.ts'
import { callTool } from '../src/tools/callTool.ts'
import { findTool } from '../src/tools/registry.ts'
import { BondingCurveLaunchpadArtifact } from '../src/dev/artifacts/index.ts'

let app: TestApp
let api: Api
let accountId: string
let agentId: string
let payout: Address
let token: Address

const call = (name: string, args: unknown, extra: Partial<Parameters<typeof callTool>[2]> = {}) =>
  callTool(findTool(name)!, args, { core: app.services.core, accountId, agent: { bound: agentId }, callId: 'call-1', ...extra })
const result = (outcome: Awaited<ReturnType<typeof callTool>>) => {
  expect(outcome).toMatchObject({ ok: true })
  return (outcome as { result: any }).result
}
/** An HTTP answer without its `meta` (request id and time), as a tool result has none. */
const body = async (path: string) => {
  const res = await api('GET', path)
  expect(res.status).toBe(200)
  const { meta: _, ...rest } = res.body
  return rest
}
const chainTxs = async () => (await app.services.pool.query(`select count(*)::int as n from chain_tx where agent_id = $1`, [agentId])).rows[0].n as number
const weth = (owner: Address) =>
  app.services.chain!.publicClient.readContract({ address: app.services.chain!.manifest.contracts.weth, abi: erc20Abi, functionName: 'balanceOf', args: [owner] })

beforeAll(async () => {
  app = await startTestApp({}, { withChain: true })
  ;({ api, accountId } = await app.account())
  payout = privateKeyToAccount(generatePrivateKey()).address
  const a = await api('POST', '/agents', { name: 'tool-creator', skills: ['token-launch', 'wallet'], payout_wallet: payout })
  agentId = a.body.id
  expect((await api('POST', '/dev/faucet', { agentId, eth: '5' })).status).toBe(200)
  const launch = await api('POST', '/launch/venue-a', { agentId, symbol: 'TOOLA', name: 'Tool Curve', quote: 'ETH' }, { 'idempotency-key': 'tool-launch-1' })
  expect(launch.status).toBe(202)
  const live = await waitForLaunchEnd(api, launch.body.id)
  expect(live.status).toBe('live')
  token = live.tokenAddress
  // Another account's agent buys 1 ETH on the curve: 0.005 ETH of creator fees for this agent.
  const other = (await app.account({ name: 'buyer' })).api
  const buyer = (await other('POST', '/agents', { name: 'buyer', skills: ['trading'] })).body
  expect((await other('POST', '/dev/faucet', { agentId: buyer.id, eth: '3' })).status).toBe(200)
  const chain = app.services.chain!
  const account = await app.services.wallet!.loadAccount(buyer.id)
  const w = createWalletClient({ account, chain: chain.chain, transport: http(chain.rpcUrl) })
  const hash = await w.writeContract({
    address: chain.manifest.contracts.venueA, abi: BondingCurveLaunchpadArtifact.abi, functionName: 'buy',
    args: [token, parseEther('1'), 0n, account.address], value: parseEther('1'),
  })
  expect((await chain.publicClient.waitForTransactionReceipt({ hash, pollingInterval: 50 })).status).toBe('success')
  await app.services.indexer!.syncOnce()
})
afterAll(async () => {
  await app?.close()
})

describe('the token and fee read tools answer what the HTTP routes answer', () => {
  it('get_price, get_token and list_tokens for the same token', async () => {
    expect(result(await call('get_price', { tokens: [token, 'ETH', 'TSLAx'] }))).toEqual(await body(`/price?tokens=${token},ETH,TSLAx`))
    const viaTool = result(await call('get_token', { address: token }))
    expect(viaTool).toEqual(await body(`/tokens/${token}`))
    expect(viaTool).toMatchObject({ address: token.toLowerCase(), symbol: 'TOOLA', creatorAgent: { id: agentId }, trades24h: 1 })
    const board = result(await call('list_tokens', { limit: 5, venue: 'venue-a' }))
    expect(board).toEqual(await body('/tokens?limit=5&venue=venue-a'))
    expect(board.tokens[0]).toMatchObject({ address: token.toLowerCase(), volume24hUsd: '3000.00' })
  })

  it('get_fee_earnings for the bound agent', async () => {
    const earnings = result(await call('get_fee_earnings', {}))
    expect(earnings).toEqual(await body(`/fees/earnings?agentId=${agentId}`))
    expect(earnings).toMatchObject({ agentId, payoutAddress: payout.toLowerCase(), claimableUsd: '15.00' })
  })

  it('refuses what the routes refuse, with the same codes', async () => {
    expect(await call('get_token', { address: `0x${'12'.repeat(20)}` })).toMatchObject({ ok: false, status: 404, error: { code: 'not_found' } })
    expect(await call('get_price', { tokens: ['DOGE'] })).toMatchObject({ ok: false, status: 422, error: { code: 'validation_failed', fieldErrors: { tokens: expect.stringMatching(/DOGE/) } } })
    expect(await call('list_tokens', { limit: 0 })).toMatchObject({ ok: false, status: 422, error: { fieldErrors: { limit: expect.any(String) } } })
  })
})

describe('claim_fees', () => {
  it('preview says what would be claimed and where it goes, and sends nothing', async () => {
    const before = await chainTxs()
    const preview = result(await call('claim_fees', {}, { mode: 'preview', callId: 'tc-claim-preview' }))
    expect(preview).toEqual({
      agentId, to: payout.toLowerCase(), claimableUsd: '15.00',
      claims: [expect.objectContaining({ tokenAddress: token.toLowerCase(), symbol: 'TOOLA', expectedAmount: '0.005', to: payout.toLowerCase() })],
    })
    expect(await chainTxs()).toBe(before)
    expect(await weth(payout)).toBe(0n)
    const { rows } = await app.services.pool.query(`select count(*)::int as n from wallet_op where agent_id = $1 and kind = 'claim'`, [agentId])
    expect(rows[0].n).toBe(0)
  })

  it('claims once per call id: a retried call answers the same claim and pays nothing more', async () => {
    const before = await chainTxs()
    const first = result(await call('claim_fees', {}, { callId: 'tc-claim-1' }))
    expect(first).toMatchObject({ agentId, status: 'confirmed', to: payout.toLowerCase() })
    expect(first.claims).toEqual([expect.objectContaining({ tokenAddress: token.toLowerCase(), amount: '0.005', txHash: first.txHash })])
    expect(await weth(payout)).toBe(parseEther('0.005'))
    const again = result(await call('claim_fees', {}, { callId: 'tc-claim-1' }))
    expect(again).toEqual(first)
    expect(await chainTxs()).toBe(before + 1)
    expect(await weth(payout)).toBe(parseEther('0.005'))
    // A new call id plans again and finds nothing left, as POST /fees/claim would.
    expect(await call('claim_fees', {}, { callId: 'tc-claim-2' })).toMatchObject({ ok: false, status: 422, error: { code: 'nothing_to_claim' } })
    expect((await api('POST', '/fees/claim', { agentId })).body.code).toBe('nothing_to_claim')
  })

  it('is refused for another agent id and for a token the agent did not launch', async () => {
    expect(await call('claim_fees', { agent_id: '00000000-0000-4000-8000-000000000000' }, { callId: 'tc-claim-3' })).toMatchObject({ ok: false, status: 404 })
    const notOurs = await call('claim_fees', { tokenAddress: app.services.chain!.manifest.contracts.usdc }, { callId: 'tc-claim-4' })
    expect(notOurs).toMatchObject({ ok: false, status: 422, error: { fieldErrors: { tokenAddress: expect.any(String) } } })
  })
})

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { erc20Abi, type Address } from 'viem'
import { startTestApp, type Api, type TestApp } from './support/app.ts'
import { callTool, toolJsonSchema } from '../src/tools/callTool.ts'
import { findTool, toolsFor } from '../src/tools/registry.ts'
import { grantedTools } from '../src/domain/skills/builtinSkills.ts'
import { stableUuid } from '../src/domain/util/stableUuid.ts'

let app: TestApp
let api: Api
let accountId: string
let agentId: string
let keyId: string
const friend = '0x00000000000000000000000000000000000f00d2' as Address
const stranger = '0x00000000000000000000000000000000000bad02' as Address
const later = '0x00000000000000000000000000000000000aa7e2' as Address

beforeAll(async () => {
  // A real hold, as on a public chain: a new address is usable an hour after it is added.
  app = await startTestApp({ WHITELIST_HOLD_SECONDS: '3600' }, { withChain: true })
  ;({ api, accountId } = await app.account())
  keyId = (await app.services.pool.query(`select id from api_key where account_id = $1`, [accountId])).rows[0].id
  const a = await api('POST', '/agents', { name: 'payer', skills: ['wallet'] })
  agentId = a.body.id
  expect((await api('POST', '/dev/faucet', { agentId, eth: '2', usdc: '100' })).status).toBe(200)
  expect((await api('POST', `/agents/${agentId}/whitelist`, { address: friend, label: 'friend' })).status).toBe(201)
  // The friend was added long ago: its hold has passed.
  await app.services.pool.query(`update agent_whitelist set usable_at = now() - interval '1 second' where address = $1`, [friend])
})
afterAll(async () => {
  await app?.close()
})

const call = (name: string, args: unknown, extra: Partial<Parameters<typeof callTool>[2]> = {}) =>
  callTool(findTool(name)!, args, { core: app.services.core, accountId, agent: { bound: agentId }, callId: 'call-1', keyId, ...extra })
const usdcOf = (owner: Address) =>
  app.services.chain!.publicClient.readContract({ address: app.services.chain!.manifest.contracts.usdc, abi: erc20Abi, functionName: 'balanceOf', args: [owner] })
const sentCount = async () => (await app.services.pool.query(`select count(*)::int as n from chain_tx where agent_id = $1`, [agentId])).rows[0].n as number

describe('the wallet tools', () => {
  it('describe their arguments for a model: the transfer without agentId, admin tools only to admin scope and never through skills', () => {
    expect(Object.keys(toolJsonSchema(findTool('wallet_transfer')!).properties as object).sort()).toEqual(['agent_id', 'amount', 'to', 'token'])
    expect(findTool('wallet_transfer')).toMatchObject({ scope: 'trade', movesFunds: true })
    const names = (scopes: ('read' | 'trade' | 'admin')[], skills?: string[]) =>
      toolsFor({ scopes, ...(skills ? { granted: grantedTools(skills) } : {}) }).map((t) => t.name)
    expect(names(['read', 'trade'])).not.toContain('add_to_whitelist')
    expect(names(['read', 'trade', 'admin'])).toEqual(expect.arrayContaining(['add_to_whitelist', 'remove_from_whitelist']))
    expect(names(['read', 'trade', 'admin'], ['wallet'])).toEqual(['get_agent', 'get_portfolio', 'wallet_transfer', 'get_whitelist', 'get_fee_earnings', 'claim_fees'])
  })

  it('transfers to a whitelisted address once per call id, as seen on chain', async () => {
    const before = await sentCount()
    const first = await call('wallet_transfer', { to: friend, token: 'USDC', amount: '10' }, { callId: 'tc-transfer-1' })
    expect(first).toMatchObject({ ok: true, result: { status: 'confirmed', kind: 'transfer', token: 'USDC', to: friend, amount: '10', valueUsd: '10.00', txHash: expect.stringMatching(/^0x/) } })
    const transfer = (first as { result: { id: string; txHash: string } }).result
    expect(transfer.id).toBe(stableUuid(accountId, 'tool/wallet_transfer', 'tc-transfer-1'))
    expect(await usdcOf(friend)).toBe(10_000_000n)
    // A retried tool call (same id) answers the same transfer and sends nothing new.
    const again = await call('wallet_transfer', { to: friend, token: 'USDC', amount: '10' }, { callId: 'tc-transfer-1' })
    expect(again).toMatchObject({ ok: true, result: { id: transfer.id, txHash: transfer.txHash } })
    expect(await usdcOf(friend)).toBe(10_000_000n)
    expect(await sentCount()).toBe(before + 1)
    // The same call id asking for another transfer is refused, not answered with the first one.
    const reused = await call('wallet_transfer', { to: friend, token: 'USDC', amount: '11' }, { callId: 'tc-transfer-1' })
    expect(reused).toMatchObject({ ok: false, status: 422, error: { code: 'idempotency_key_reused' } })
    const second = await call('wallet_transfer', { to: friend, token: 'USDC', amount: '10' }, { callId: 'tc-transfer-2' })
    expect(second).toMatchObject({ ok: true, result: { status: 'confirmed' } })
    expect(await usdcOf(friend)).toBe(20_000_000n)
    expect(await sentCount()).toBe(before + 2)
  })

  it('refuses a transfer to an address off the whitelist with the API code, and nothing moves', async () => {
    const before = await sentCount()
    const refused = await call('wallet_transfer', { to: stranger, token: 'USDC', amount: '1' }, { callId: 'tc-stranger' })
    const viaApi = await api('POST', '/wallet/transfer', { agentId, to: stranger, token: 'USDC', amount: '1' })
    expect(refused).toMatchObject({ ok: false, status: 403, error: { code: 'address_not_whitelisted' } })
    expect(viaApi.status).toBe(403)
    expect((refused as { error: { code: string } }).error.code).toBe(viaApi.body.code)
    expect(await usdcOf(stranger)).toBe(0n)
    expect(await sentCount()).toBe(before)
    const ops = await app.services.pool.query(`select 1 from wallet_op where id = $1`, [stableUuid(accountId, 'tool/wallet_transfer', 'tc-stranger')])
    expect(ops.rowCount).toBe(0)
  })

  it('previews a transfer with its fee and sends nothing', async () => {
    const before = await sentCount()
    const preview = await call('wallet_transfer', { to: friend, token: 'USDC', amount: '5' }, { mode: 'preview', callId: 'tc-preview' })
    expect(preview).toMatchObject({ ok: true, result: { to: friend, toLabel: 'friend', token: 'USDC', amount: '5', valueUsd: '5.00', sent: false } })
    const fee = (preview as { result: { fee: { gasLimit: string; maxFeeEth: string; maxFeeUsd: string } } }).result.fee
    expect(Number(fee.gasLimit)).toBeGreaterThan(21_000)
    expect(Number(fee.maxFeeEth)).toBeGreaterThan(0)
    expect(Number(fee.maxFeeUsd)).toBeGreaterThanOrEqual(0)
    expect(await usdcOf(friend)).toBe(20_000_000n)
    expect(await sentCount()).toBe(before)
    const ops = await app.services.pool.query(`select 1 from wallet_op where id = $1`, [stableUuid(accountId, 'tool/wallet_transfer', 'tc-preview')])
    expect(ops.rowCount).toBe(0)
    // The preview refuses as the transfer would.
    const off = await call('wallet_transfer', { to: stranger, token: 'USDC', amount: '1' }, { mode: 'preview' })
    expect(off).toMatchObject({ ok: false, status: 403, error: { code: 'address_not_whitelisted' } })
  })

  it('reads the portfolio as GET /wallet/portfolio does', async () => {
    const got = await call('get_portfolio', {})
    const viaApi = await api('GET', `/wallet/portfolio?agentId=${agentId}`)
    expect(got).toMatchObject({ ok: true, result: { agentId, walletAddress: viaApi.body.walletAddress } })
    const usdc = (got as { result: { holdings: { symbol: string; balance: string }[] } }).result.holdings.find((h) => h.symbol === 'USDC')
    expect(usdc).toMatchObject({ balance: '80', valueUsd: '80.00' })
    expect(viaApi.body.holdings.find((h: { symbol: string }) => h.symbol === 'USDC')).toEqual(usdc)
  })

  it('adds an address under the whitelist hold and removes it, journaled as the key and the tool', async () => {
    const added = await call('add_to_whitelist', { address: later, label: 'later' })
    expect(added).toMatchObject({ ok: true, result: { address: later, label: 'later', usable: false } })
    const usableAt = Date.parse((added as { result: { usableAt: string } }).result.usableAt)
    expect(usableAt).toBeGreaterThan(Date.now() + 3_500_000)
    const listed = await call('get_whitelist', {})
    expect((listed as { result: { whitelist: { address: string; usable: boolean }[] } }).result.whitelist).toEqual([
      expect.objectContaining({ address: friend, usable: true }),
      expect.objectContaining({ address: later, usable: false }),
    ])
    // Within its hold the address cannot receive, through the tool as through the API.
    const before = await sentCount()
    expect(await call('wallet_transfer', { to: later, token: 'USDC', amount: '1' }, { callId: 'tc-later' })).toMatchObject({ ok: false, status: 403, error: { code: 'address_in_cooldown' } })
    expect((await api('POST', '/wallet/transfer', { agentId, to: later, token: 'USDC', amount: '1' })).body.code).toBe('address_in_cooldown')
    expect(await sentCount()).toBe(before)
    const removed = await call('remove_from_whitelist', { address: later })
    expect(removed).toMatchObject({ ok: true, result: { address: later, deleted: true } })
    expect(await call('remove_from_whitelist', { address: later })).toMatchObject({ ok: false, status: 404, error: { code: 'not_found' } })
    const audit = await api('GET', `/agents/${agentId}/audit`)
    const byTool = audit.body.entries.filter((e: { actor: { tool?: string } | null }) => e.actor?.tool)
    expect(byTool.map((e: { action: string; actor: object }) => [e.action, e.actor])).toEqual([
      ['whitelist.remove', { type: 'key', keyId, tool: 'remove_from_whitelist' }],
      ['whitelist.add', { type: 'key', keyId, tool: 'add_to_whitelist' }],
    ])
  })
})

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { erc20Abi, type Address } from 'viem'
import { startTestApp, type Api, type TestApp } from './support/app.ts'
import { BondingCurveLaunchpadArtifact } from '../src/dev/artifacts/index.ts'
import { callTool } from '../src/tools/callTool.ts'
import { findTool, toolsFor } from '../src/tools/registry.ts'
import { grantedTools } from '../src/domain/skills/builtinSkills.ts'
import { stableUuid } from '../src/domain/util/stableUuid.ts'

let app: TestApp
let api: Api
let accountId: string
let agentId: string
let wallet: Address

beforeAll(async () => {
  app = await startTestApp({}, { withChain: true })
  ;({ api, accountId } = await app.account())
  const a = await api('POST', '/agents', { name: 'launcher', skills: ['token-launch'] })
  ;({ id: agentId, walletAddress: wallet } = a.body)
  expect((await api('POST', '/dev/faucet', { agentId, eth: '5' })).status).toBe(200)
})
afterAll(async () => {
  await app?.close()
})

const call = (name: string, args: unknown, extra: Partial<Parameters<typeof callTool>[2]> = {}) =>
  callTool(findTool(name)!, args, { core: app.services.core, accountId, agent: { bound: agentId }, callId: 'call-1', ...extra })
const count = async (sql: string, params: unknown[]) => (await app.services.pool.query(sql, params)).rows[0].n as number
const sentBy = (agent: string) => count(`select count(*)::int as n from chain_tx where agent_id = $1`, [agent])
const launchesOf = (agent: string) => count(`select count(*)::int as n from actor where kind = 'launch' and snapshot->'context'->>'agentId' = $1`, [agent])

type LaunchResult = { id: string; status: string; tokenAddress: string; txHash: string }

describe('launch tools', () => {
  it('launches once per call id: a retry answers the same launch and one token exists on chain', async () => {
    const args = { venue: 'venue-a', symbol: 'TOOLY', name: 'Tool Token', quote: 'ETH' }
    const first = await call('launch_token', args, { callId: 'tc-launch-1' })
    expect(first.ok).toBe(true)
    const launch = (first as { result: LaunchResult }).result
    expect(launch).toMatchObject({ id: stableUuid(accountId, 'tool/launch_token', 'tc-launch-1'), status: 'live', agentId, symbol: 'TOOLY' })
    expect(launch.tokenAddress).toMatch(/^0x[0-9a-f]{40}$/)
    const again = await call('launch_token', args, { callId: 'tc-launch-1' })
    expect(again).toMatchObject({ ok: true, result: { id: launch.id, status: 'live', tokenAddress: launch.tokenAddress, txHash: launch.txHash } })

    expect(await sentBy(agentId)).toBe(1)
    expect(await launchesOf(agentId)).toBe(1)
    const client = app.services.chain!.publicClient
    expect(await client.getTransactionCount({ address: wallet })).toBe(1)
    const venueA = app.services.chain!.manifest.contracts.venueA
    expect(await client.readContract({ address: venueA, abi: BondingCurveLaunchpadArtifact.abi, functionName: 'allTokensLength' })).toBe(1n)
    expect(await client.readContract({ address: launch.tokenAddress as Address, abi: erc20Abi, functionName: 'symbol' })).toBe('TOOLY')

    const status = await call('get_launch_status', { launchId: launch.id })
    expect(status).toMatchObject({ ok: true, result: { id: launch.id, status: 'live', progress: { percent: 100 }, tokenAddress: launch.tokenAddress } })
    // The same call id with other arguments is another request: refused, nothing launched.
    const reused = await call('launch_token', { ...args, symbol: 'OTHER' }, { callId: 'tc-launch-1' })
    expect(reused).toMatchObject({ ok: false, status: 422, error: { code: 'idempotency_key_reused' } })
    expect(await sentBy(agentId)).toBe(1)
  })

  it('previews (launch_preview, and launch_token in preview mode) with nothing sent or recorded', async () => {
    const [txs, launches] = [await sentBy(agentId), await launchesOf(agentId)]
    const nonce = await app.services.chain!.publicClient.getTransactionCount({ address: wallet })
    const args = { venue: 'venue-b', symbol: 'PEEK', name: 'Peek', quote: 'ETH' }
    const preview = await call('launch_preview', args)
    expect(preview).toMatchObject({
      ok: true,
      result: { venue: 'venue-b', agentId, predictedTokenAddress: expect.stringMatching(/^0x[0-9a-f]{40}$/), startingMarketCap: { quote: '5', usd: '15000.00' } },
    })
    const dry = await call('launch_token', args, { mode: 'preview', callId: 'tc-dry' })
    expect(dry).toMatchObject({ ok: true, result: { venue: 'venue-b', predictedTokenAddress: (preview as { result: { predictedTokenAddress: string } }).result.predictedTokenAddress } })
    expect([await sentBy(agentId), await launchesOf(agentId)]).toEqual([txs, launches])
    expect(await app.services.chain!.publicClient.getTransactionCount({ address: wallet })).toBe(nonce)
    const none = await call('get_launch_status', { launchId: stableUuid(accountId, 'tool/launch_token', 'tc-dry') })
    expect(none).toMatchObject({ ok: false, status: 404, error: { code: 'not_found' } })
  })

  it("refuses a verified asset's symbol with the API's code and message, as POST /launch does", async () => {
    const before = await launchesOf(agentId)
    const refused = await call('launch_token', { venue: 'venue-a', symbol: 'USDC', name: 'Fake Dollar', quote: 'ETH' }, { callId: 'tc-usdc' })
    expect(refused).toMatchObject({ ok: false, status: 422, error: { code: 'validation_failed' } })
    const fieldErrors = (refused as { error: { fieldErrors: Record<string, string> } }).error.fieldErrors
    expect({ ...fieldErrors }).toEqual({ symbol: 'USDC is the symbol of a verified asset; a launch cannot take it.' })
    const http = await api('POST', '/launch/venue-a', { agentId, symbol: 'USDC', name: 'Fake Dollar', quote: 'ETH' }, { 'idempotency-key': 'k-usdc' })
    expect(http.status).toBe(422)
    expect(http.body).toMatchObject({ code: 'validation_failed', field_errors: { symbol: fieldErrors.symbol } })
    const bad = await call('launch_preview', { venue: 'venue-c', symbol: 'ok', name: '', quote: 'ETH' })
    expect(bad).toMatchObject({ ok: false, status: 422, error: { code: 'validation_failed' } })
    expect(Object.keys((bad as { error: { fieldErrors: object } }).error.fieldErrors).sort()).toEqual(['name', 'symbol', 'venue'])
    expect(await launchesOf(agentId)).toBe(before)
    expect(await sentBy(agentId)).toBe(1)
  })

  it("keeps an agent's tool calls to its own launches", async () => {
    const other = (await api('POST', '/agents', { name: 'other', skills: ['token-launch'] })).body.id as string
    const launchId = stableUuid(accountId, 'tool/launch_token', 'tc-launch-1')
    expect(await call('get_launch_status', { launchId }, { agent: { bound: other } })).toMatchObject({ ok: false, status: 404, error: { code: 'not_found' } })
    expect(await call('get_launch_status', { launchId, agent_id: other })).toMatchObject({ ok: false, status: 404 })
  })

  it('the token-launch skill grants the three launch tools; a read key sees only the status', () => {
    const names = (ts: { name: string }[]) => ts.map((t) => t.name)
    expect(names(toolsFor({ scopes: ['read', 'trade'], granted: grantedTools(['token-launch']) }))).toEqual(
      expect.arrayContaining(['launch_preview', 'launch_token', 'get_launch_status']),
    )
    expect(names(toolsFor({ scopes: ['read'], granted: grantedTools(['token-launch']) })).filter((n) => n.includes('launch'))).toEqual(['get_launch_status'])
    expect(findTool('launch_token')).toMatchObject({ scope: 'trade', movesFunds: true })
  })
})

import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { parseEther, type Address, type Hex, type WalletClient } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { SMA } from 'trading-signals'
import { apiClient, startTestApp, waitForLaunchEnd, type Api, type TestApp } from './support/app.ts'
import { startModelServer, type ModelServer } from './support/modelServer.ts'
import { AmmRouterArtifact } from '../src/dev/artifacts/index.ts'
import { walletClientFor, type ChainHandle } from '../src/adapters/chain/chain.ts'

/**
 * The market-intelligence tools: granted by the `market-intelligence` skill to a model in a chat
 * turn (which calls get_indicators and reads the values), and served over MCP.
 */
let model: ModelServer
let app: TestApp
let api: Api
let apiKey: string
let chain: ChainHandle
let analyst: string
let token: Address
let outsider: WalletClient
/** Chain time (s) of the first scripted minute. */
let base: number
const SWAPS = 8

async function mined(hash: Hex) {
  const r = await chain.publicClient.waitForTransactionReceipt({ hash, pollingInterval: 20 })
  expect(r.status).toBe('success')
  return r
}

beforeAll(async () => {
  model = await startModelServer()
  app = await startTestApp({ OPENAI_BASE_URL: model.baseUrl, OPENAI_API_KEY: 'test-key' }, { withChain: true })
  chain = app.services.chain!
  ;({ api, apiKey } = await app.account())
  analyst = (await api('POST', '/agents', { name: 'analyst', skills: ['market-intelligence'] })).body.id
  const launcher = (await api('POST', '/agents', { name: 'launcher', skills: ['token-launch'] })).body.id
  expect((await api('POST', '/dev/faucet', { agentId: launcher, eth: '5' })).status).toBe(200)
  const res = await api('POST', '/launch/venue-b', { agentId: launcher, symbol: 'TOOLX', name: 'Tool X', quote: 'ETH' }, { 'idempotency-key': 'intel-tools-launch' })
  token = (await waitForLaunchEnd(api, res.body.id)).tokenAddress

  // One buy per chain minute from a wallet that is none of ours.
  const key = generatePrivateKey()
  outsider = walletClientFor(chain, key)
  await chain.publicClient.request({ method: 'anvil_setBalance' as never, params: [privateKeyToAccount(key).address, '0x3635C9ADC5DEA00000'] as never })
  const head = await chain.publicClient.getBlock({ blockTag: 'latest' })
  base = (Math.floor(Number(head.timestamp) / 60) + 1) * 60
  for (let i = 0; i < SWAPS; i++) {
    await chain.publicClient.request({ method: 'evm_setNextBlockTimestamp' as never, params: [base + i * 60 + 1] as never })
    await mined(await outsider.writeContract({
      chain: chain.chain, account: outsider.account!, address: chain.manifest.contracts.router, abi: AmmRouterArtifact.abi,
      functionName: 'swapExactETHForTokens', args: [0n, [chain.manifest.contracts.weth, token], outsider.account!.address, BigInt(base + 86_400)],
      value: parseEther(String(0.01 * (i + 1))),
    }))
  }
  await app.services.indexer!.syncOnce()
}, 60_000)
afterAll(async () => {
  await app?.close()
  await model?.stop()
})
beforeEach(() => model.mock.reset())

describe('market-intelligence tools', () => {
  it('a model in a chat turn calls get_indicators and sees the values', async () => {
    const args = { mint: token, indicators: ['sma'], timeframe: '1m', period: 5 }
    model.mock.on({ userMessage: 'how is TOOLX trending', hasToolResult: false }, { toolCalls: [{ id: 'call_ind', name: 'get_indicators', arguments: JSON.stringify(args) }] })
    model.mock.onToolResult('call_ind', { content: 'TOOLX is above its 5-minute average.' })
    const res = await api('POST', `/agents/${analyst}/chat`, { message: 'how is TOOLX trending' })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    const [call] = res.body.toolCalls
    expect(call).toMatchObject({ id: 'call_ind', name: 'get_indicators', status: 'ok', result: { address: token.toLowerCase(), timeframe: '1m', indicators: [{ indicator: 'sma', period: 5 }] } })

    // The value equals the library's SMA(5) of the same closes.
    const candles = await apiClient(`${app.url}/api/v1`)('GET', `/tokens/${token}/candles?interval=1m&from=${base}&to=${base + SWAPS * 60}`)
    const sma = new SMA(5)
    const closes = (candles.body.candles as Array<{ closeUsd: number }>).map((c) => c.closeUsd)
    expect(closes).toHaveLength(SWAPS)
    sma.updates(closes, false)
    expect(call.result.indicators[0].value).toBeCloseTo(sma.getResultOrThrow(), 12)

    // The model had the skill's tools, and read the values in the tool message.
    const requests = model.mock.getRequests()
    const tools = (requests[0]!.body as { tools: Array<{ function: { name: string } }> }).tools.map((t) => t.function.name)
    expect(tools).toEqual(expect.arrayContaining(['get_market_signals', 'get_indicators', 'get_candles']))
    const toolMessage = (requests[1]!.body as { messages: Array<{ role: string; content: string }> }).messages.find((m) => m.role === 'tool')
    expect(toolMessage?.content).toContain(String(call.result.indicators[0].value))
  })

  it('over MCP: listed, and get_market_signals and get_candles answer as the routes do', async () => {
    const client = new Client({ name: 'intel-test', version: '1.0.0' })
    await client.connect(new StreamableHTTPClientTransport(new URL(`${app.url}/api/mcp`), { requestInit: { headers: { authorization: `Bearer ${apiKey}` } } }))
    try {
      const names = (await client.listTools()).tools.map((t) => t.name)
      expect(names).toEqual(expect.arrayContaining(['get_market_signals', 'get_indicators', 'get_candles']))
      const movers = (await client.callTool({ name: 'get_market_signals', arguments: { agent_id: analyst, signal: 'top_movers', timeframe: '24h', sort_by: 'volume' } })) as any
      expect(movers.isError).toBeFalsy()
      expect(movers.structuredContent.movers[0]).toMatchObject({ mint: token.toLowerCase(), symbol: 'TOOLX' })
      const candles = (await client.callTool({ name: 'get_candles', arguments: { agent_id: analyst, address: token, interval: '1h', limit: 2 } })) as any
      expect(candles.structuredContent.candles.length).toBeLessThanOrEqual(2)
      expect(candles.structuredContent.candles.at(-1).trades).toBeGreaterThan(0)
      const bad = (await client.callTool({ name: 'get_market_signals', arguments: { agent_id: analyst, signal: 'top_movers', timeframe: '2d' } })) as any
      expect(bad.isError).toBe(true)
      expect(JSON.stringify(bad.content)).toContain('timeframe')
    } finally {
      await client.close()
    }
  })
})

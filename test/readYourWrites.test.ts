import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Address } from 'viem'
import { startTestApp, type Api, type TestApp, waitForLaunchEnd } from './support/app.ts'

/*
 * Read your own writes: an operation that answered `confirmed` (a swap) or `live` (a launch) is
 * in every read at once, with no wait: trades with ours=true, the portfolio, the token board.
 * The indexer follows new heads by subscription here (the embedded anvil's WebSocket).
 */

let app: TestApp
let api: Api
let agentId: string
const key = () => `k-${Math.random().toString(36).slice(2)}`

const waitLive = (id: string) => waitForLaunchEnd(api, id)

beforeAll(async () => {
  app = await startTestApp({}, { withChain: true })
  api = (await app.account()).api
  const a = await api('POST', '/agents', { name: 'reader', model: 'gpt-4o-mini', skills: ['token-launch', 'trading'] })
  agentId = a.body.id
  expect((await api('POST', '/dev/faucet', { agentId, eth: '20' })).status).toBe(200)
})
afterAll(async () => {
  await app?.close()
})

describe('a confirmed operation is in every read at once', () => {
  it('the indexer follows new heads over the WebSocket subscription', () => {
    expect(app.services.chain!.publicClient.transport.type).toBe('webSocket')
  })

  it('a launch that went live is on the board, indexed; each swap that answered confirmed is in trades?ours=true and the portfolio', async () => {
    const launch = await api('POST', '/launch/venue-a', { agentId, symbol: 'RYW', name: 'Read Your Writes', quote: 'ETH' }, { 'idempotency-key': key() })
    expect(launch.status).toBe(202)
    const live = await waitLive(launch.body.id)
    expect(live.status).toBe('live')
    const token = (live.tokenAddress as Address).toLowerCase()

    const detail = await api('GET', `/tokens/${token}`)
    expect(detail.status).toBe(200)
    expect(detail.body).toMatchObject({ address: token, indexed: true, launchId: launch.body.id })
    const board = await api('GET', '/tokens?limit=100')
    expect(board.body.tokens.map((t: { address: string }) => t.address)).toContain(token)

    const txHashes: string[] = []
    for (let i = 0; i < 3; i++) {
      const swap = await api('POST', '/swap/execute', { agentId, tokenIn: 'ETH', tokenOut: token, amountIn: '0.05', slippageBps: 300, acknowledgeUnverified: true }, { 'idempotency-key': key() })
      expect(swap.status, JSON.stringify(swap.body)).toBe(200)
      expect(swap.body.status).toBe('confirmed')
      txHashes.push(swap.body.txHash)

      // No wait of any kind between the answer and these reads.
      const [trades, portfolio] = await Promise.all([
        api('GET', `/tokens/${token}/trades?ours=true&limit=100`),
        api('GET', `/wallet/portfolio?agentId=${agentId}`),
      ])
      expect(trades.status).toBe(200)
      expect(trades.body.trades.map((t: { txHash: string }) => t.txHash).sort()).toEqual([...txHashes].sort())
      expect(trades.body.trades.every((t: { ours: boolean; agentId: string; side: string }) => t.ours && t.agentId === agentId && t.side === 'buy')).toBe(true)
      expect(portfolio.status).toBe(200)
      const held = portfolio.body.holdings.find((h: { address: string | null }) => h.address === token)
      expect(held).toMatchObject({ symbol: 'RYW' })
      expect(Number(held.balance)).toBeGreaterThan(0)
    }
  })
})

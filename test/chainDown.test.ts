import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type Api, type TestApp } from './support/app.ts'

let app: TestApp
let api: Api
let agentId: string
const friend = '0x00000000000000000000000000000000000f00d1'

beforeAll(async () => {
  app = await startTestApp({}, { withChain: true })
  api = (await app.account()).api
  const a = await api('POST', '/agents', { name: 'stranded', model: 'gpt-4o-mini', skills: [] })
  agentId = a.body.id
  await api('POST', '/dev/faucet', { agentId, eth: '2', usdc: '100' })
  await api('POST', `/agents/${agentId}/whitelist`, { address: friend })
  // The node dies under the service: what a crashed or unreachable RPC looks like.
  const { pid } = JSON.parse(readFileSync(join(app.services.config.dataDir, 'chain', 'anvil.json'), 'utf8')) as { pid: number }
  process.kill(pid, 'SIGKILL')
})
afterAll(async () => {
  await app?.close()
})

describe('the chain is unreachable', () => {
  it('every chain-bound route answers 503 chain_unavailable with Retry-After, never a 500', async () => {
    const calls: Array<[string, string, unknown?, Record<string, string>?]> = [
      ['POST', '/swap/quote', { agentId, tokenIn: 'ETH', tokenOut: 'USDC', amountIn: '0.01', slippageBps: 100 }],
      ['POST', '/swap/execute', { agentId, tokenIn: 'ETH', tokenOut: 'USDC', amountIn: '0.01', slippageBps: 100 }],
      ['POST', '/wallet/transfer', { agentId, to: friend, token: 'USDC', amount: '1' }],
      ['POST', '/launch/preview', { agentId, venue: 'venue-a', symbol: 'DOWN', name: 'Down', quote: 'ETH' }],
      ['POST', '/launch/venue-a', { agentId, symbol: 'DOWN', name: 'Down', quote: 'ETH' }, { 'idempotency-key': 'down-1' }],
      ['GET', `/wallet/portfolio?agentId=${agentId}`],
      ['GET', `/fees/earnings?agentId=${agentId}`],
    ]
    for (const [method, path, body, headers] of calls) {
      const res = await api(method, path, body, headers)
      expect({ path, status: res.status, code: res.body.code }).toEqual({ path, status: 503, code: 'chain_unavailable' })
      expect(res.headers.get('retry-after')).toMatch(/^\d+$/)
    }
    // Nothing was started: no launch, no operation, no stored transaction.
    const { rows } = await app.services.pool.query(
      `select (select count(*)::int from chain_tx) as txs, (select count(*)::int from actor where kind <> 'agent') as actors`,
    )
    expect(rows[0]).toEqual({ txs: 0, actors: 0 })
    // The idempotency key was released with the failure, so the same launch can be retried later.
    const { rows: keys } = await app.services.pool.query(`select count(*)::int as n from idempotency_key`)
    expect(keys[0].n).toBe(0)
  })

  it('health says degraded and names the RPC', async () => {
    const res = await api('GET', '/health')
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ status: 'degraded', rpc: { configured: true, ok: false } })
  })
})

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPublicClient, http, type PublicClient } from 'viem'
import { startTestApp, type TestApp } from './support/app.ts'
import { createIndexer, type Indexer } from '../src/adapters/chain/indexer.ts'
import type { ChainHandle } from '../src/adapters/chain/chain.ts'
import { createLogger } from '../src/logger.ts'

/*
 * How the indexer follows the chain: by new-heads subscription over a WebSocket, by polling over
 * HTTP, and `waitForBlock` nudging a pass at once. Each indexer here polls once a minute, so
 * only the subscription or the nudge can make it index a new block within the test.
 */

let app: TestApp
let chain: ChainHandle
const logger = createLogger({ level: 'silent' })
const started: Indexer[] = []

async function mine(): Promise<number> {
  await chain.publicClient.request({ method: 'evm_mine' as never, params: [] as never })
  return Number(await chain.publicClient.getBlockNumber({ cacheTime: 0 }))
}
async function checkpoint(): Promise<number> {
  const { rows } = await app.services.pool.query(`select block_number from chain_checkpoint where chain_id = $1`, [chain.chainId])
  return Number(rows[0]?.block_number ?? -1)
}
async function until(cond: () => Promise<boolean>, ms: number): Promise<boolean> {
  const end = Date.now() + ms
  while (Date.now() < end) {
    if (await cond()) return true
    await new Promise((r) => setTimeout(r, 20))
  }
  return cond()
}
function indexer(publicClient: PublicClient): Indexer {
  const i = createIndexer({ pool: app.services.pool, chain: { ...chain, publicClient }, logger, pollMs: 60_000, backstopMs: 60_000 })
  started.push(i)
  return i
}

beforeAll(async () => {
  app = await startTestApp({}, { withChain: true })
  chain = app.services.chain!
  // The service's own indexer would index the blocks too: only the ones under test run.
  await app.services.indexer!.stop()
})
afterAll(async () => {
  for (const i of started) await i.stop()
  await app?.close()
})

describe('following the chain', () => {
  it('over the WebSocket, a new head is indexed with no poll and no call', async () => {
    expect(chain.publicClient.transport.type).toBe('webSocket')
    const ws = indexer(chain.publicClient)
    ws.start()
    const head = Number(await chain.publicClient.getBlockNumber({ cacheTime: 0 }))
    expect(await until(async () => (await checkpoint()) >= head, 10_000)).toBe(true)
    // The subscription opens right after the first pass: a head mined before it is not announced,
    // so blocks are mined until one is (at most a few; the next poll is a minute away).
    let indexed = false
    for (let tries = 0; tries < 10 && !indexed; tries++) {
      const block = await mine()
      indexed = await until(async () => (await checkpoint()) >= block, 500)
    }
    expect(indexed).toBe(true)
    await ws.stop()
  })

  it('over HTTP it polls; waitForBlock runs a pass at once and resolves when the block is indexed', async () => {
    const overHttp = indexer(createPublicClient({ chain: chain.chain, transport: http(chain.rpcUrl) }) as PublicClient)
    overHttp.start()
    const head = Number(await chain.publicClient.getBlockNumber({ cacheTime: 0 }))
    expect(await overHttp.waitForBlock(head, { timeoutMs: 10_000 })).toBe(true)
    const block = await mine()
    const t0 = Date.now()
    expect(await overHttp.waitForBlock(block, { timeoutMs: 10_000 })).toBe(true)
    expect(Date.now() - t0).toBeLessThan(10_000)
    expect(await checkpoint()).toBeGreaterThanOrEqual(block)
    // Already indexed: at once.
    expect(await overHttp.waitForBlock(block, { timeoutMs: 1 })).toBe(true)
    // A block that does not exist yet: false after the timeout, not a hang.
    expect(await overHttp.waitForBlock(block + 1000, { timeoutMs: 300 })).toBe(false)
    await overHttp.stop()
    // A stopped indexer (on a node where another holds the indexer's role) reads the stored
    // checkpoint: what is indexed answers at once, what is not after the timeout.
    const t1 = Date.now()
    expect(await overHttp.waitForBlock(block, { timeoutMs: 60_000 })).toBe(true)
    expect(Date.now() - t1).toBeLessThan(1000)
    expect(await overHttp.waitForBlock(block + 1000, { timeoutMs: 300 })).toBe(false)
  })
})

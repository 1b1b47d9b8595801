import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPublicClient, http, type Address } from 'viem'
import { isDatabaseUnavailable, primaryClient } from '../src/adapters/db/primaryHosts.ts'
import { apiClient, type Api, type ApiResponse } from './support/app.ts'
import { adminCreateAccount, startServer, stopServer, serverCleanup, type ServerProcess } from './support/server.ts'
import { autoctlInstalled, scratchPair } from './support/dbPair.ts'
import { waitFor } from './support/waitFor.ts'
const hasAutoctl = autoctlInstalled('test/dbPairService.test.ts')

/*
 * The service (WORKERS=3, its embedded chain) on the replicated pair (DATABASE_URL naming both
 * hosts), and the loss of the pair's primary machine under it, twice: the node answers 503 database_unavailable (or 409 while a
 * key's claim is settled) with Retry-After while no primary answers, never a 500 or a hang; then
 * it writes to the promoted standby by itself, the client's keyed retries land once (20 keyed
 * swaps in flight: each confirmed once on chain, the wallet's nonces contiguous), and the nodes
 * hold the 64 shards again.
 */
const { servers, cleanups } = serverCleanup()

describe.skipIf(!hasAutoctl)('the service on the replicated pair', () => {
  const { dir, pair, destroy } = scratchPair('dbpairsvc', 30000, 2000)
  let url: string
  let node: ServerProcess
  let api: Api
  let rpcUrl: string

  const call = (method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<ApiResponse> =>
    Promise.race([
      api(method, path, body, headers),
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${method} ${path} hung`)), 10_000).unref()),
    ])

  beforeAll(async () => {
    cleanups.push(async () => {
      await destroy()
    })
    url = /^DATABASE_URL=(.+)$/m.exec((await pair('start')).stdout)![1]!
    const dataDir = join(dir, 'data')
    const env = { DATABASE_URL: url, DATA_DIR: dataDir, LOG_LEVEL: 'warn', SHARD_LEASE_SECONDS: '3', WORKERS: '3', RATE_LIMIT_PER_KEY: '1000000', RATE_LIMIT_PER_IP: '1000000' }
    node = await startServer(env)
    rpcUrl = (JSON.parse(readFileSync(join(dataDir, 'chain', 'anvil.json'), 'utf8')) as { rpcUrl: string }).rpcUrl
    servers.push(node)
    api = apiClient(`${node.url}/api/v1`, (await adminCreateAccount(env)).apiKey)
  }, 150_000)
  afterAll(async () => {
    if (node) await stopServer(node).catch(() => {})
  })

  /**
   * A client of the test's own on the pair's primary, once one accepts writes: a promoted standby
   * may stay read-only for some seconds after the service was already answered (slower on a loaded
   * machine), so each attempt that finds no writable host is retried, for up to `ms`.
   */
  async function connectPrimary(ms = 60_000) {
    let db: ReturnType<typeof primaryClient> | undefined
    let last: unknown
    await waitFor(async () => {
      const c = primaryClient(url)
      try {
        await c.connect()
        db = c
        return true
      } catch (err) {
        await c.end().catch(() => {})
        if (!isDatabaseUnavailable(err)) throw err
        last = err
        return false
      }
    }, ms).catch((err: unknown) => {
      // Out of time: say why the last attempt failed.
      throw err instanceof Error && err.message === 'condition not met in time' && last ? last : err
    })
    return db!
  }

  /** The client's policy (docs/api.md): the same key after each answer's Retry-After (at once after a reset), until a 2xx. */
  async function untilDone(send: () => Promise<ApiResponse>, answers: Array<{ status: number | 'reset'; code?: string; retryAfter?: string | null }>, ms = 45_000) {
    const until = Date.now() + ms
    for (;;) {
      const res = await send().catch(() => undefined)
      answers.push(res ? { status: res.status, code: res.body?.code, retryAfter: res.headers.get('retry-after') } : { status: 'reset' })
      if (res && res.status < 300) return res
      if (Date.now() > until) throw new Error(`no 2xx in time: ${JSON.stringify(answers.slice(-3))}`)
      await new Promise((r) => setTimeout(r, res ? 1000 * Number(res.headers.get('retry-after') ?? 1) : 200))
    }
  }
  /** Every refusal was a retryable one with Retry-After: 503 database_unavailable, or 409 while a key's claim is settled. */
  const onlyRetryable = (answers: Array<{ status: number | 'reset'; code?: string; retryAfter?: string | null }>) =>
    answers.filter((a) => a.status !== 'reset' && a.status >= 300 && (!['database_unavailable', 'idempotency_key_in_progress'].includes(a.code ?? '') || !a.retryAfter))

  it('kill -9 of the primary machine: retryable answers while none answers, then the same nodes carry on; a keyed retry lands once', async () => {
    const agent = (name: string, key: string) => call('POST', '/agents', { name, model: 'gpt-4o-mini', skills: [] }, { 'idempotency-key': key })
    expect((await agent('before', 'k-before')).status).toBe(201)

    const { stdout: primary } = await pair('primary')
    await pair('crash', primary.trim())
    // The client's policy (docs/api.md): the same key after each answer's Retry-After, until a 2xx.
    const answers: Array<{ status: number; code?: string; retryAfter: string | null }> = []
    let after: ApiResponse | undefined
    await waitFor(async () => {
      after = await agent('after', 'k-after')
      answers.push({ status: after.status, code: after.body?.code, retryAfter: after.headers.get('retry-after') })
      if (after.status < 300) return true
      await new Promise((r) => setTimeout(r, 1000 * Number(after!.headers.get('retry-after') ?? 1)))
      return false
    }, 45_000)
    expect(after!.status).toBe(201)
    const refused = answers.filter((a) => a.status >= 300)
    expect(refused.filter((a) => !((a.status === 503 && a.code === 'database_unavailable') || (a.status === 409 && a.code === 'idempotency_key_in_progress')) || !a.retryAfter)).toEqual([])
    expect((await agent('after', 'k-after')).body.id).toBe(after!.body.id)

    const list = await call('GET', '/agents')
    expect(list.body.agents.map((a: { name: string }) => a.name).sort()).toEqual(['after', 'before'])
    expect(node.child.exitCode).toBe(null)
    const db = await connectPrimary()
    try {
      await waitFor(async () => {
        const { rows } = await db.query<{ n: number }>(
          `select count(*)::int as n from shard_lease l join service_node s on s.id = l.owner where s.stopped_at is null and s.expires_at > now() and l.expires_at > now()`,
        )
        return rows[0]!.n === 64
      }, 20_000)
    } finally {
      await db.end()
    }
    expect(node.logs()).not.toMatch(/unhandled error/)
  }, 135_000)

  it('kill -9 of the primary machine with 20 keyed swaps in flight: each answered once it is back, each confirmed once on chain, nonces contiguous', async () => {
    await pair('start') // the node lost in the first test rejoins as the standby
    const wallet = (await call('POST', '/agents', { name: 'trader', model: 'gpt-4o-mini', skills: [] }, { 'idempotency-key': 'k-trader' })).body as { id: string; walletAddress: Address }
    expect((await call('POST', '/dev/faucet', { agentId: wallet.id, eth: '5' })).status).toBe(200)
    const body = { agentId: wallet.id, tokenIn: 'ETH', tokenOut: 'USDC', amountIn: '0.001', slippageBps: 300 }
    const answers: Array<{ status: number | 'reset'; code?: string; retryAfter?: string | null }> = []
    const swaps = Array.from({ length: 20 }, (_, i) => untilDone(() => call('POST', '/swap/execute', body, { 'idempotency-key': `swap-${i}` }), answers, 60_000))
    const { stdout: primary } = await pair('primary')
    await pair('crash', primary.trim())
    const done = await Promise.all(swaps)
    expect(done.map((r) => r.status).filter((st) => st !== 200 && st !== 202)).toEqual([])
    expect(onlyRetryable(answers)).toEqual([])
    // Each key names one swap; each swap confirmed with one transaction; the nonces contiguous.
    expect(new Set(done.map((r) => r.body.id)).size).toBe(20)
    const db = await connectPrimary()
    try {
      await waitFor(async () => (await db.query(
        `select 1 from wallet_op o join actor a on a.id = o.id where o.agent_id = $1 and a.status not in ('confirmed', 'failed')`, [wallet.id])).rowCount === 0, 30_000)
      const ops = (await db.query<{ id: string; status: string; txs: number }>(
        `select o.id, a.status, (select count(*)::int from chain_tx t join effect e on e.id = t.effect_id where e.actor_id = o.id and t.status = 'confirmed') as txs
           from wallet_op o join actor a on a.id = o.id where o.agent_id = $1 and o.kind = 'swap'`, [wallet.id])).rows
      expect(ops).toHaveLength(20)
      expect(ops.filter((o) => o.status !== 'confirmed' || o.txs !== 1)).toEqual([])
      const nonces = (await db.query<{ nonce: string }>(`select nonce from chain_tx where agent_id = $1 and status = 'confirmed' order by nonce`, [wallet.id])).rows.map((r) => Number(r.nonce))
      expect(nonces).toEqual(nonces.map((_, i) => i))
      expect(await createPublicClient({ transport: http(rpcUrl) }).getTransactionCount({ address: wallet.walletAddress })).toBe(nonces.length)
    } finally {
      await db.end()
    }
  }, 150_000)
})

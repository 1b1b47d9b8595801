import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import pg from 'pg'
import { createPublicClient, http, type Address } from 'viem'
import { apiClient, type Api, type ApiResponse } from './support/app.ts'
import { createTestDatabase } from './support/db.ts'
import { adminCreateAccount, kill9, startServer, stopServer, serverCleanup, type ServerProcess } from './support/server.ts'
import { waitFor } from './support/waitFor.ts'
import { readSse, type SseEvent } from './support/sse.ts'
import { stableUuid } from '../src/domain/util/stableUuid.ts'

/*
 * Three node processes on one database and chain (A runs the embedded chain, B and C join it),
 * shard leases of 2 s. What a client sees when a node dies under it: every request it sent
 * completes on a retry with its Idempotency-Key, within the failover time and 2 s.
 */
const LEASE_SECONDS = 2
const SWAPS = 20
const { servers, cleanups } = serverCleanup()
let db: pg.Pool
let nodes: ServerProcess[]
let account: { accountId: string; apiKey: string }
let agent: { id: string; walletAddress: Address }
let rpcUrl: string

const api = (n: ServerProcess): Api => apiClient(`${n.url}/api/v1`, account.apiKey)
const swapBody = () => ({ agentId: agent.id, tokenIn: 'ETH', tokenOut: 'USDC', amountIn: '0.001', slippageBps: 300 })
const liveNodes = async () =>
  (await db.query<{ id: string; pid: number; shards: number }>(
    `select n.id, n.pid, (select count(*)::int from shard_lease l where l.owner = n.id and l.expires_at > now()) as shards
       from service_node n where n.stopped_at is null and n.expires_at > now() and not n.leaving`,
  )).rows

type Attempt = { status: number | 'reset'; swapId?: string; at: number }

/**
 * A client's retry policy (docs/api.md): a connection reset, 409 `idempotency_key_in_progress`,
 * 429 and 503 are retried with the same key, after the answer's Retry-After (the next node that
 * is up takes it, as a load balancer would send it).
 */
async function swapWithRetries(targets: () => ServerProcess[], key: string, attempts: Attempt[]): Promise<ApiResponse> {
  for (let i = 0; ; i++) {
    const node = targets()[i % targets().length]!
    let res: ApiResponse | undefined
    try {
      res = await api(node)('POST', '/swap/execute', swapBody(), { 'idempotency-key': key })
    } catch {
      attempts.push({ status: 'reset', at: Date.now() })
      continue
    }
    attempts.push({ status: res.status, swapId: res.body?.id, at: Date.now() })
    if (![409, 429, 503].includes(res.status)) return res
    await new Promise((r) => setTimeout(r, 1000 * Number(res.headers.get('retry-after') ?? 1)))
  }
}

/** Every swap of the agent ended, each confirmed with exactly one transaction; the wallet's nonces are contiguous on chain and in the outbox. */
async function settledExactlyOnce(): Promise<{ swaps: string[]; nonce: number }> {
  await waitFor(async () => (await db.query(
    `select 1 from wallet_op o join actor a on a.id = o.id where o.agent_id = $1 and a.status not in ('confirmed', 'failed')`, [agent.id])).rowCount === 0, 30_000)
  const ops = (await db.query<{ id: string; status: string; txs: number }>(
    `select o.id, a.status, (select count(*)::int from chain_tx t join effect e on e.id = t.effect_id where e.actor_id = o.id and t.status = 'confirmed') as txs
       from wallet_op o join actor a on a.id = o.id where o.agent_id = $1 and o.kind = 'swap'`, [agent.id])).rows
  expect(ops.filter((o) => o.status !== 'confirmed' || o.txs !== 1)).toEqual([])
  const nonces = (await db.query<{ nonce: string }>(`select nonce from chain_tx where agent_id = $1 and status = 'confirmed' order by nonce`, [agent.id])).rows.map((r) => Number(r.nonce))
  expect(nonces).toEqual(nonces.map((_, i) => i))
  const nonce = await createPublicClient({ transport: http(rpcUrl) }).getTransactionCount({ address: agent.walletAddress })
  expect(nonce).toBe(nonces.length)
  return { swaps: ops.map((o) => o.id), nonce }
}

beforeAll(async () => {
  const database = await createTestDatabase()
  const dataDir = mkdtempSync(join(tmpdir(), 'alts-nodeloss-'))
  db = new pg.Pool({ connectionString: database.url, max: 2 })
  cleanups.push(async () => {
    await db.end()
    await database.drop()
    rmSync(dataDir, { recursive: true, force: true })
  })
  const env = { DATABASE_URL: database.url, DATA_DIR: dataDir, SHARD_LEASE_SECONDS: String(LEASE_SECONDS), LOG_LEVEL: 'warn' }
  const a = await startServer(env)
  servers.push(a)
  rpcUrl = (JSON.parse(readFileSync(join(dataDir, 'chain', 'anvil.json'), 'utf8')) as { rpcUrl: string }).rpcUrl
  const joinEnv = { ...env, CHAIN_RPC_URL: rpcUrl.replace(/^http/, 'ws'), DEPLOYMENT_MANIFEST: join(dataDir, 'chain', 'manifest.json'), CHAIN_DEV: '1' }
  const [b, c] = await Promise.all([startServer(joinEnv), startServer(joinEnv)])
  servers.push(b, c)
  nodes = [a, b, c]
  account = await adminCreateAccount(env)
  agent = (await api(a)('POST', '/agents', { name: 'loss', model: 'gpt-4o-mini', skills: [] })).body
  expect((await api(a)('POST', '/dev/faucet', { agentId: agent.id, eth: '5' })).status).toBe(200)
  await waitFor(async () => (await liveNodes()).length === 3, 20_000)
}, 120_000)
afterAll(async () => {
  for (const n of nodes ?? []) await stopServer(n).catch(() => {})
})

describe('losing a node loses no request', () => {
  it(`kill -9 of a node with ${SWAPS} keyed swaps in flight: each completes on a retry with its key within the failover time + 2 s, once`, async () => {
    const victim = nodes[1]!
    const victimId = (await liveNodes()).find((n) => n.pid === victim.child.pid)!.id
    const nonceBefore = (await settledExactlyOnce()).nonce
    let up = [...nodes]
    const attempts: Attempt[][] = Array.from({ length: SWAPS }, () => [])
    const keys = Array.from({ length: SWAPS }, (_, i) => `loss-${i}`)
    const done = keys.map((key, i) => swapWithRetries(() => (attempts[i]!.length === 0 ? [nodes[i % 3]!] : up), key, attempts[i]!))
    // Every key is claimed and the victim holds some in flight.
    await waitFor(async () => {
      const { rows } = await db.query<{ n: number; victim: number }>(
        `select count(*)::int as n, count(*) filter (where holder_node = $2 and status = 'in_flight')::int as victim
           from idempotency_key where account_id = $1 and key like 'loss-%'`, [account.accountId, victimId])
      return rows[0]!.n === SWAPS && rows[0]!.victim > 0
    }, 20_000)
    up = nodes.filter((n) => n !== victim)
    await kill9(victim, { group: false })
    const killedAt = Date.now()
    const answers = await Promise.all(done)

    expect(answers.map((r) => [r.status, r.body.status])).toEqual(answers.map(() => [200, 'confirmed']))
    const cut = attempts.filter((a) => a[0]!.status === 'reset')
    expect(cut.length).toBeGreaterThan(0)
    const completedAfterMs = cut.map((a) => a.at(-1)!.at - killedAt)
    expect(Math.max(...completedAfterMs)).toBeLessThan(LEASE_SECONDS * 1000 + 2000)
    // The swap's id derives from the key: the same on the first answer, the retry, and in the database.
    keys.forEach((key, i) => expect(answers[i]!.body.id).toBe(stableUuid(account.accountId, 'swap/execute', key)))
    const replays = await Promise.all(keys.map((key) => api(up[0]!)('POST', '/swap/execute', swapBody(), { 'idempotency-key': key })))
    expect(replays.map((r) => [r.status, r.headers.get('idempotent-replayed'), r.body.id])).toEqual(answers.map((a) => [200, 'true', a.body.id]))
    const { swaps, nonce } = await settledExactlyOnce()
    expect(nonce - nonceBefore).toBe(SWAPS)
    expect(swaps.filter((id) => answers.some((a) => a.body.id === id))).toHaveLength(SWAPS)
    console.info(`cut off: ${cut.length}; kill to last retry answered: ${Math.max(...completedAfterMs)} ms`)
  }, 60_000)

  it('kill -9 of the node serving a swap\'s event stream: the client reconnects to another node with Last-Event-ID and sees the rest and the end, each event once', async () => {
    const [survivor, victim] = [nodes[0]!, nodes[2]!]
    const chain = createPublicClient({ transport: http(rpcUrl) })
    // Blocks wait, so the swap is still on its way when the stream is cut.
    await chain.request({ method: 'evm_setAutomine' as never, params: [false] as never })
    const key = 'streamed-swap'
    const swapId = stableUuid(account.accountId, 'swap/execute', key)
    const answer = swapWithRetries(() => [survivor], key, [])
    await waitFor(async () => (await db.query(`select 1 from wallet_op where id = $1`, [swapId])).rowCount === 1, 20_000)
    const seen: SseEvent[] = []
    const url = (n: ServerProcess) => `${n.url}/api/v1/swap/${swapId}/events`
    const first = readSse(url(victim), { apiKey: account.apiKey, onEvent: (e) => seen.push(e) }).catch(() => null)
    await waitFor(() => seen.length > 0, 20_000)
    await kill9(victim, { group: false })
    await first
    const cutAt = seen.length
    await chain.request({ method: 'evm_setAutomine' as never, params: [true] as never })
    await chain.request({ method: 'evm_mine' as never, params: [] as never })
    const rest = await readSse(url(survivor), { apiKey: account.apiKey, lastEventId: seen.at(-1)!.id!, onEvent: (e) => seen.push(e) })
    expect(rest.status).toBe(200)
    const ids = seen.map((e) => Number(e.id))
    expect(new Set(ids).size).toBe(ids.length)
    expect(ids).toEqual([...ids].sort((x, y) => x - y))
    const statuses = seen.map((e) => e.data.status)
    expect(new Set(statuses).size).toBe(statuses.length)
    expect(statuses.at(-1)).toBe('confirmed')
    expect(seen.length).toBeGreaterThan(cutAt)
    expect((await answer).body.id).toBe(swapId)
    await settledExactlyOnce()
  }, 60_000)
})

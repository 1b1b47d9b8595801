import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import pg from 'pg'
import { createPublicClient, http, type Address } from 'viem'
import { apiClient, type Api } from './support/app.ts'
import { createTestDatabase } from './support/db.ts'
import { adminCreateAccount, kill9, startServer, stopServer, serverCleanup, type ServerProcess } from './support/server.ts'
import { waitFor } from './support/waitFor.ts'

/*
 * Three node processes on one database and one chain: node A runs the embedded chain, B and C
 * join it. Shard leases last 2 s, so a node that dies has its work moved within seconds.
 */
const LEASE_SECONDS = 2
const { servers, cleanups } = serverCleanup()
let db: pg.Pool
let env: Record<string, string>
let joinEnv: Record<string, string>
let nodes: ServerProcess[]
let apiKey: string
let agent: { id: string; walletAddress: Address }
let rpcUrl: string

const api = (n: ServerProcess): Api => apiClient(`${n.url}/api/v1`, apiKey)
const swapBody = () => ({ agentId: agent.id, tokenIn: 'ETH', tokenOut: 'USDC', amountIn: '0.001', slippageBps: 300 })
const nodeRows = async () =>
  (await db.query<{ pid: number; status: string; shards: number }>(
    `select n.pid, case when n.stopped_at is not null then 'stopped' when n.expires_at <= now() then 'expired' else 'active' end as status,
            (select count(*)::int from shard_lease l where l.owner = n.id and l.expires_at > now()) as shards
       from service_node n`,
  )).rows

/** Every swap of the agent ended; each confirmed one has exactly one confirmed transaction; the wallet's nonces are 0..n-1 on chain and in the outbox. */
async function settledExactlyOnce(): Promise<{ swaps: number }> {
  await waitFor(async () => (await db.query(
    `select 1 from wallet_op o join actor a on a.id = o.id where o.agent_id = $1 and a.status not in ('confirmed', 'failed')`, [agent.id])).rowCount === 0, 60_000)
  const ops = (await db.query<{ id: string; status: string; txs: number }>(
    `select o.id, a.status, (select count(*)::int from chain_tx t join effect e on e.id = t.effect_id where e.actor_id = o.id and t.status = 'confirmed') as txs
       from wallet_op o join actor a on a.id = o.id where o.agent_id = $1 and o.kind = 'swap'`, [agent.id])).rows
  expect(ops.filter((o) => o.status !== 'confirmed')).toEqual([])
  expect(ops.filter((o) => o.txs !== 1)).toEqual([])
  const nonces = (await db.query<{ nonce: string }>(`select nonce from chain_tx where agent_id = $1 and status = 'confirmed' order by nonce`, [agent.id])).rows.map((r) => Number(r.nonce))
  expect(nonces).toEqual(nonces.map((_, i) => i))
  const client = createPublicClient({ transport: http(rpcUrl) })
  expect(await client.getTransactionCount({ address: agent.walletAddress })).toBe(nonces.length)
  return { swaps: ops.length }
}

beforeAll(async () => {
  const database = await createTestDatabase()
  const dataDir = mkdtempSync(join(tmpdir(), 'alts-nodes-'))
  db = new pg.Pool({ connectionString: database.url, max: 2 })
  cleanups.push(async () => {
    await db.end()
    await database.drop()
    rmSync(dataDir, { recursive: true, force: true })
  })
  env = { DATABASE_URL: database.url, DATA_DIR: dataDir, SHARD_LEASE_SECONDS: String(LEASE_SECONDS), LOG_LEVEL: 'warn' }
  const a = await startServer(env)
  servers.push(a)
  rpcUrl = (JSON.parse(readFileSync(join(dataDir, 'chain', 'anvil.json'), 'utf8')) as { rpcUrl: string }).rpcUrl
  // The others share A's database, chain and data directory (its wallet master key).
  joinEnv = { ...env, CHAIN_RPC_URL: rpcUrl.replace(/^http/, 'ws'), DEPLOYMENT_MANIFEST: join(dataDir, 'chain', 'manifest.json'), CHAIN_DEV: '1' }
  const [b, c] = await Promise.all([startServer(joinEnv), startServer(joinEnv)])
  servers.push(b, c)
  nodes = [a, b, c]
  ;({ apiKey } = await adminCreateAccount(env, ['--operator']))
  agent = (await api(a)('POST', '/agents', { name: 'spread', model: 'gpt-4o-mini', skills: [] })).body
  expect((await api(a)('POST', '/dev/faucet', { agentId: agent.id, eth: '5' })).status).toBe(200)
  await waitFor(async () => {
    const live = (await nodeRows()).filter((n) => n.status === 'active')
    return live.length === 3 && live.reduce((s, n) => s + n.shards, 0) === 64 && live.every((n) => n.shards >= 20)
  }, 20_000)
}, 120_000)
afterAll(async () => {
  for (const n of nodes ?? []) await stopServer(n).catch(() => {})
})

describe('three nodes on one database', () => {
  it('lists the nodes, their shards and the one indexer', async () => {
    const res = await api(nodes[1]!)('GET', '/ops/nodes')
    expect(res.status).toBe(200)
    const live = res.body.nodes.filter((n: { status: string }) => n.status === 'active')
    expect(live.map((n: { pid: number }) => n.pid).sort()).toEqual(nodes.map((n) => n.child.pid).sort())
    expect(live.flatMap((n: { shards: number[] }) => n.shards).sort((x: number, y: number) => x - y)).toEqual([...Array(64).keys()])
    expect(live.filter((n: { roles: string[] }) => n.roles.includes('indexer'))).toHaveLength(1)
  })

  it('swaps of one wallet sent to all three nodes at once get contiguous nonces, each swap once', async () => {
    const answers = await Promise.all(Array.from({ length: 9 }, (_, i) => api(nodes[i % 3]!)('POST', '/swap/execute', swapBody(), { 'idempotency-key': `spread-${i}` })))
    expect(answers.map((r) => [r.status, r.body.status])).toEqual(answers.map(() => [200, 'confirmed']))
    expect(new Set(answers.map((r) => r.body.txHash)).size).toBe(9)
    expect((await settledExactlyOnce()).swaps).toBe(9)
  })

  it('kill -9 of a node with swaps in flight: its shards move within the lease, every swap completes once', async () => {
    const victim = nodes[1]!
    const before = (await db.query(`select count(*)::int as n from wallet_op where agent_id = $1`, [agent.id])).rows[0].n as number
    const inFlight = Array.from({ length: 4 }, (_, i) => api(victim)('POST', '/swap/execute', swapBody(), { 'idempotency-key': `victim-${i}` }).catch(() => null))
    await waitFor(async () => (await db.query(`select count(*)::int as n from wallet_op where agent_id = $1`, [agent.id])).rows[0].n > before)
    const killedAt = Date.now()
    await kill9(victim, { group: false })
    await Promise.all(inFlight)
    await waitFor(async () => {
      const rows = await nodeRows()
      return rows.find((n) => n.pid === victim.child.pid)?.status === 'stopped' &&
        rows.filter((n) => n.status === 'active').reduce((s, n) => s + n.shards, 0) === 64
    }, LEASE_SECONDS * 1000 + 5000)
    const movedMs = Date.now() - killedAt
    expect(movedMs).toBeLessThan(LEASE_SECONDS * 1000 + 5000)
    await settledExactlyOnce()
    // The survivors serve on.
    expect((await api(nodes[0]!)('POST', '/swap/execute', swapBody(), { 'idempotency-key': 'after-kill' })).body.status).toBe('confirmed')
    nodes[1] = await startServer(joinEnv)
    servers.push(nodes[1])
  })

  it('a node frozen (SIGSTOP) past its lease is retired; when it wakes it commits nothing stale', async () => {
    const frozen = nodes[2]!
    const before = (await db.query(`select count(*)::int as n from wallet_op where agent_id = $1`, [agent.id])).rows[0].n as number
    const inFlight = Array.from({ length: 3 }, (_, i) => api(frozen)('POST', '/swap/execute', swapBody(), { 'idempotency-key': `frozen-${i}` }).catch(() => null))
    await waitFor(async () => (await db.query(`select count(*)::int as n from wallet_op where agent_id = $1`, [agent.id])).rows[0].n > before)
    process.kill(frozen.child.pid!, 'SIGSTOP')
    try {
      await waitFor(async () => (await nodeRows()).find((n) => n.pid === frozen.child.pid)?.status === 'stopped', LEASE_SECONDS * 1000 + 5000)
      // Its work was taken over while it slept.
      await settledExactlyOnce()
    } finally {
      process.kill(frozen.child.pid!, 'SIGCONT')
    }
    await Promise.all(inFlight)
    // Awake, it rejoins; what it was doing when frozen changed nothing more.
    await waitFor(async () => (await nodeRows()).find((n) => n.pid === frozen.child.pid)?.status === 'active', 10_000)
    await settledExactlyOnce()
    const doubled = (await db.query(
      `select j.actor_id, j.event->>'effectId' as effect, count(*)::int as n from actor_journal j
        where j.account_id = (select account_id from agent where id = $1) and j.event ? 'effectId'
        group by 1, 2 having count(*) > 1`, [agent.id])).rows
    expect(doubled).toEqual([])
  })

  it('a rolling restart of the joined nodes under load: every request answered, nothing lost or doubled', async () => {
    let stop = false
    const up = new Set([0, 1, 2])
    const answers: number[] = []
    const load = (async () => {
      for (let i = 0; !stop; i++) {
        // A load balancer sends to the nodes that are up.
        const target = [...up][i % up.size]!
        const res = await api(nodes[target]!)('POST', '/swap/execute', swapBody(), { 'idempotency-key': `rolling-${i}` })
        answers.push(res.status)
      }
    })()
    for (const i of [1, 2]) {
      up.delete(i)
      await stopServer(nodes[i]!)
      nodes[i] = await startServer(joinEnv)
      servers.push(nodes[i]!)
      up.add(i)
    }
    stop = true
    await load
    expect(answers.length).toBeGreaterThan(0)
    expect(answers.filter((s) => s !== 200 && s !== 503)).toEqual([])
    await settledExactlyOnce()
  })
})

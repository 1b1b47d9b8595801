/**
 * Failover time: two node processes on one database and chain (node A runs the embedded chain,
 * node B joins it); B is killed with SIGKILL, and the time is measured from the kill to the
 * first commit of an actor in one of B's shards by A (an inbox event written for one actor per
 * B shard just before the kill), and to the first 2xx answer of a retry of a keyed swap that B
 * was running (cut off by the kill; retried on A with its key as docs/api.md's retry policy says:
 * after a 409, its Retry-After). Two cases, side by side in one run:
 * - same host: A sees B's process gone at its next renewal (a third of the lease);
 * - another host (B's row names another host, so only its lease running out tells): the lease.
 * Then a rolling restart (SIGUSR2) of `WORKERS=3` under steady keep-alive load (keyed swaps and
 * reads): requests failed (goal 0) and the p50 / p99 latency of those sent during the restart.
 *
 * npm run -s bench:failover            (SHARD_LEASE_SECONDS=10 by default; FAILOVER_LEASE to change)
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { adminCreateAccount, kill9, startServer, stopServer, type ServerProcess } from '../test/support/server.ts'
import { apiClient } from '../test/support/app.ts'
import { shardOf } from '../src/actors/runtime/shards.ts'
import { createDatabase, dropAllDatabases, percentile, round, sleep } from './lib.ts'
import { rollingRestartUnderLoad } from './rollingRestartLoad.ts'

const LEASE = process.env.FAILOVER_LEASE ?? '10'

const CUT_SWAPS = 3
const rpc = (rpcUrl: string, method: string, params: unknown[]) =>
  fetch(rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) })

/** Retries a keyed swap on `api` until a 2xx (after a 409, 429 or 503: its Retry-After); answers when. */
async function retryUntilDone(api: ReturnType<typeof apiClient>, body: object, key: string): Promise<number> {
  for (;;) {
    const res = await api('POST', '/swap/execute', body, { 'idempotency-key': key }).catch(() => undefined)
    if (res && res.status < 300) return performance.now()
    if (res && ![409, 429, 503].includes(res.status)) throw new Error(`retry answered ${res.status} ${JSON.stringify(res.body)}`)
    await sleep(res ? 1000 * Number(res.headers.get('retry-after') ?? 1) : 0)
  }
}

async function once(sameHost: boolean): Promise<{ moveMs: number; firstCommitMs: number; firstRetryMs: number }> {
  const url = await createDatabase(`bench_failover_${Date.now()}`)
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-failover-'))
  const env = { DATABASE_URL: url, DATA_DIR: dataDir, LOG_LEVEL: 'warn', SHARD_LEASE_SECONDS: LEASE }
  const nodes: ServerProcess[] = []
  const db = new pg.Pool({ connectionString: url, max: 2 })
  try {
    nodes.push(await startServer(env))
    const { rpcUrl } = JSON.parse(readFileSync(join(dataDir, 'chain', 'anvil.json'), 'utf8')) as { rpcUrl: string }
    nodes.push(await startServer({ ...env, CHAIN_RPC_URL: rpcUrl.replace(/^http/, 'ws'), DEPLOYMENT_MANIFEST: join(dataDir, 'chain', 'manifest.json'), CHAIN_DEV: '1' }))
    const [a, b] = nodes as [ServerProcess, ServerProcess]
    const nodeOf = async (pid: number) => (await db.query<{ id: string }>('select id from service_node where pid = $1 and stopped_at is null', [pid])).rows[0]?.id
    // Wait until B holds its share.
    let bShards: number[] = []
    for (const until = Date.now() + 60_000; Date.now() < until; await sleep(100)) {
      const bId = await nodeOf(b.child.pid!)
      bShards = bId ? (await db.query<{ shard: number }>('select shard from shard_lease where owner = $1 and expires_at > now()', [bId])).rows.map((r) => r.shard) : []
      if (bShards.length >= 30) break
    }
    if (!sameHost) await db.query(`update service_node set host = 'elsewhere' where pid = $1`, [b.child.pid])
    // One agent per B shard, made through the API (an agent's actor id is its id).
    const { apiKey } = await adminCreateAccount(env)
    const api = apiClient(`${a.url}/api/v1`, apiKey)
    const byShard = new Map<number, string>()
    for (let i = 0; byShard.size < bShards.length && i < 2000; i++) {
      const agent = (await api('POST', '/agents', { name: `f${i}`, model: 'gpt-4o-mini', skills: [] })).body as { id: string }
      if (bShards.includes(shardOf(agent.id))) byShard.set(shardOf(agent.id), agent.id)
    }
    const ids = [...byShard.values()]
    const accountId = (await db.query<{ account_id: string }>('select account_id from agent where id = $1', [ids[0]])).rows[0]!.account_id
    // Keyed swaps in flight on B (blocks wait, so they are still running when B dies).
    const trader = ids[0]!
    expect200(await api('POST', '/dev/faucet', { agentId: trader, eth: '1' }))
    await rpc(rpcUrl, 'evm_setAutomine', [false])
    const swapBody = { agentId: trader, tokenIn: 'ETH', tokenOut: 'USDC', amountIn: '0.001', slippageBps: 300 }
    const apiB = apiClient(`${b.url}/api/v1`, apiKey)
    const keys = Array.from({ length: CUT_SWAPS }, (_, i) => `cut-${i}`)
    const cut = keys.map((key) => apiB('POST', '/swap/execute', swapBody, { 'idempotency-key': key }).catch(() => 'reset'))
    const bId = await nodeOf(b.child.pid!)
    for (const until = Date.now() + 30_000; Date.now() < until; await sleep(20)) {
      if ((await db.query(`select 1 from idempotency_key where holder_node = $1 and status = 'in_flight'`, [bId])).rowCount === CUT_SWAPS) break
    }
    await kill9(b, { group: false })
    const killedAt = performance.now()
    if ((await Promise.all(cut)).some((r) => r !== 'reset')) throw new Error('a keyed swap was answered before the kill')
    await rpc(rpcUrl, 'evm_setAutomine', [true])
    await rpc(rpcUrl, 'evm_mine', [])
    const retried = Promise.all(keys.map((key) => retryUntilDone(api, swapBody, key)))
    // Written after the kill: only a node that took B's shards can process them.
    // (A stopped agent refuses `agent.stop`: the owner marks the row processed at the agent's version.)
    await db.query(`insert into actor_inbox (actor_id, account_id, event) select id, $2, '{"type":"agent.stop"}' from unnest($1::text[]) as id`, [ids, accountId])
    const aId = await nodeOf(a.child.pid!)
    let moveMs = -1
    let firstCommitMs = -1
    for (const until = performance.now() + 120_000; performance.now() < until && (moveMs < 0 || firstCommitMs < 0); await sleep(20)) {
      if (moveMs < 0 && (await db.query('select count(*)::int as n from shard_lease where owner = $1 and expires_at > now()', [aId])).rows[0].n === 64) moveMs = performance.now() - killedAt
      if (firstCommitMs < 0 && (await db.query('select 1 from actor_inbox where actor_id = any($1) and processed_at is not null limit 1', [ids])).rowCount) firstCommitMs = performance.now() - killedAt
    }
    const firstRetryMs = Math.min(...(await retried)) - killedAt
    return { moveMs: round(moveMs, 0), firstCommitMs: round(firstCommitMs, 0), firstRetryMs: round(firstRetryMs, 0) }
  } finally {
    for (const n of nodes) await stopServer(n).catch(() => {})
    await db.end()
    rmSync(dataDir, { recursive: true, force: true })
  }
}

function expect200(res: { status: number; body: unknown }) {
  if (res.status !== 200) throw new Error(`answered ${res.status} ${JSON.stringify(res.body)}`)
}

const sameHost = await once(true)
const otherHost = await once(false)
const rolling = await rollingRestartUnderLoad({ lease: LEASE, percentile })
await dropAllDatabases()
console.log(`failover with SHARD_LEASE_SECONDS=${LEASE}: kill -9 of one of two nodes (${CUT_SWAPS} keyed swaps in flight on it)`)
console.log(`  same host (process seen gone): all shards moved ${sameHost.moveMs} ms, first commit of a moved shard ${sameHost.firstCommitMs} ms, first cut-off swap answered on a retry ${sameHost.firstRetryMs} ms`)
console.log(`  other host (lease runs out):   all shards moved ${otherHost.moveMs} ms, first commit of a moved shard ${otherHost.firstCommitMs} ms, first cut-off swap answered on a retry ${otherHost.firstRetryMs} ms`)
console.log(`rolling restart (SIGUSR2) of WORKERS=3 under load: ${rolling.restartMs} ms; ${rolling.during} requests during it (${rolling.total} in all), ${rolling.failed} failed; p50 / p99 during it ${rolling.p50Ms} / ${rolling.p99Ms} ms (before it ${rolling.p50BeforeMs} / ${rolling.p99BeforeMs} ms)`)
console.log(JSON.stringify({ bench: 'failover', leaseSeconds: Number(LEASE), sameHost, otherHost, rolling }))
process.exit(0)

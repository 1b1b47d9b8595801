/**
 * A rolling restart under load, for bench/failover.ts: `WORKERS=3` (the primary forks three node
 * processes on one port), steady load from plain fetch with keep-alive (one loop of keyed swaps,
 * three loops of reads, each sending its next request when the last one answered), then SIGUSR2
 * to the primary, which restarts the nodes one at a time. Counts the requests that failed (any
 * answer but 200, or no answer) and the latency of those sent during the restart.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { adminCreateAccount, startServer, stopServer, type ServerProcess } from '../test/support/server.ts'
import { apiClient } from '../test/support/app.ts'
import { createDatabase, round, sleep } from './lib.ts'

const NODES = 3
const READ_LOOPS = 3

type Sample = { at: number; ms: number; ok: boolean }

export async function rollingRestartUnderLoad({ lease, percentile }: { lease: string; percentile(sorted: number[], p: number): number }) {
  const url = await createDatabase(`bench_rolling_${Date.now()}`)
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-rolling-'))
  const env = { DATABASE_URL: url, DATA_DIR: dataDir, LOG_LEVEL: 'warn', WORKERS: String(NODES), SHARD_LEASE_SECONDS: lease, RATE_LIMIT_PER_KEY: '1000000', RATE_LIMIT_PER_IP: '1000000' }
  const db = new pg.Pool({ connectionString: url, max: 2 })
  let primary: ServerProcess | undefined
  try {
    primary = await startServer(env)
    const live = async () => (await db.query<{ id: string }>(
      `select id from service_node where stopped_at is null and expires_at > now() and not leaving`)).rows.map((r) => r.id)
    for (const until = Date.now() + 60_000; (await live()).length < NODES && Date.now() < until; await sleep(100));
    const before = await live()
    const { apiKey } = await adminCreateAccount(env)
    const api = apiClient(`${primary.url}/api/v1`, apiKey)
    const agent = (await api('POST', '/agents', { name: 'rolling', model: 'gpt-4o-mini', skills: [] })).body as { id: string }
    await api('POST', '/dev/faucet', { agentId: agent.id, eth: '5' })

    const samples: Sample[] = []
    let stop = false
    const timed = async (send: () => Promise<{ status: number }>) => {
      const at = performance.now()
      const ok = await send().then((r) => r.status === 200, () => false)
      samples.push({ at, ms: performance.now() - at, ok })
    }
    const swapBody = { agentId: agent.id, tokenIn: 'ETH', tokenOut: 'USDC', amountIn: '0.0001', slippageBps: 300 }
    const loops = [
      (async () => {
        for (let i = 0; !stop; i++) await timed(() => api('POST', '/swap/execute', swapBody, { 'idempotency-key': `rolling-${i}` }))
      })(),
      ...Array.from({ length: READ_LOOPS }, async () => {
        while (!stop) await timed(() => api('GET', `/agents/${agent.id}`))
      }),
    ]
    await sleep(3000)
    const startedAt = performance.now()
    process.kill(primary.child.pid!, 'SIGUSR2')
    for (const until = Date.now() + 180_000; Date.now() < until; await sleep(100)) {
      const now = await live()
      if (now.length === NODES && now.every((id) => !before.includes(id))) break
    }
    const endedAt = performance.now()
    await sleep(1000)
    stop = true
    await Promise.all(loops)

    const during = samples.filter((s) => s.at >= startedAt && s.at <= endedAt)
    const sorted = (xs: Sample[]) => xs.map((s) => s.ms).sort((a, b) => a - b)
    const earlier = samples.filter((s) => s.at < startedAt)
    return {
      restartMs: round(endedAt - startedAt, 0),
      total: samples.length,
      during: during.length,
      failed: samples.filter((s) => !s.ok).length,
      p50Ms: round(percentile(sorted(during), 50), 1),
      p99Ms: round(percentile(sorted(during), 99), 1),
      p50BeforeMs: round(percentile(sorted(earlier), 50), 1),
      p99BeforeMs: round(percentile(sorted(earlier), 99), 1),
    }
  } finally {
    if (primary) await stopServer(primary).catch(() => {})
    await db.end()
    rmSync(dataDir, { recursive: true, force: true })
  }
}

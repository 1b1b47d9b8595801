/**
 * Launch benchmark: launch-to-`live` latency on the embedded chain (goal p50 ≤ 2 s) and launches
 * per second from 10 agents at once. The real server runs as a child process (embedded anvil,
 * the machine's Postgres or DATABASE_URL); this process only drives the HTTP API.
 *
 *   npm run -s bench:launch
 */
import { cpus } from 'node:os'
import { withService } from './serviceFixture.ts'

function pct(sorted: number[], p: number) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
}

async function main() {
  await withService('launch', async ({ api }) => {
    const agents: string[] = []
    for (let i = 0; i < 10; i++) {
      const a = await api('POST', '/agents', { name: `bench-${i}`, model: 'gpt-4o-mini', skills: ['token-launch'] })
      await api('POST', '/dev/faucet', { agentId: a.body.id, eth: '50' })
      agents.push(a.body.id)
    }
    let n = 0
    const launchOnce = async (agentId: string) => {
      const t0 = performance.now()
      const res = await api('POST', '/launch/venue-a', { agentId, symbol: `B${n}`, name: `Bench ${n}`, quote: 'ETH' }, { 'idempotency-key': `bench-${n++}` })
      if (res.status !== 202) throw new Error(`launch refused: ${JSON.stringify(res.body)}`)
      for (;;) {
        const s = (await api('GET', `/launch/${res.body.id}`)).body.status
        if (s === 'live') return performance.now() - t0
        if (s === 'failed') throw new Error('launch failed')
        await new Promise((r) => setTimeout(r, 25))
      }
    }
    // Warm-up, then one at a time.
    for (let i = 0; i < 3; i++) await launchOnce(agents[0]!)
    const sequential: number[] = []
    for (let i = 0; i < 30; i++) sequential.push(await launchOnce(agents[i % 10]!))
    sequential.sort((a, b) => a - b)
    // 10 agents at once, 5 launches each.
    const t0 = performance.now()
    const concurrent = (await Promise.all(agents.map(async (a) => {
      const out: number[] = []
      for (let i = 0; i < 5; i++) out.push(await launchOnce(a))
      return out
    }))).flat().sort((a, b) => a - b)
    const seconds = (performance.now() - t0) / 1000
    const result = {
      machine: { cores: cpus().length, node: process.version },
      sequential: { launches: sequential.length, p50Ms: Math.round(pct(sequential, 50)), p95Ms: Math.round(pct(sequential, 95)), maxMs: Math.round(sequential.at(-1)!) },
      concurrent10Agents: { launches: concurrent.length, seconds: Number(seconds.toFixed(2)), launchesPerSecond: Number((concurrent.length / seconds).toFixed(2)), p50Ms: Math.round(pct(concurrent, 50)), p95Ms: Math.round(pct(concurrent, 95)) },
      goal: { p50Ms: 2000, met: pct(sequential, 50) <= 2000 },
    }
    process.stdout.write(`\nlaunch to live, embedded anvil\n`)
    process.stdout.write(`  one at a time:   p50 ${result.sequential.p50Ms} ms, p95 ${result.sequential.p95Ms} ms (goal p50 <= 2000 ms: ${result.goal.met ? 'met' : 'MISSED'})\n`)
    process.stdout.write(`  10 agents x 5:   ${result.concurrent10Agents.launchesPerSecond} launches/s, p50 ${result.concurrent10Agents.p50Ms} ms, p95 ${result.concurrent10Agents.p95Ms} ms\n`)
    process.stdout.write(`${JSON.stringify(result)}\n`)
  })
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`)
  process.exit(1)
})

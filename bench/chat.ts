/**
 * Chat-turn overhead: a one-round chat turn through the service (`POST /agents/:id/chat`, the
 * scripted model server answering at once) side by side with a direct `openai` SDK call to the
 * same server, in one run, at 1 and at 50 concurrent chats (goal: the service adds at most 5 ms
 * at p50 and keeps its p99 under 25 ms at 50 concurrent chats). The service runs as a child
 * process; the scripted server and both clients run here. Then the cost of a turn: 10 in flight
 * for a while, the service's and Postgres's CPU per turn, side by side with raw durable upserts
 * (bench/upsertWorker.ts, 10 loops) on the same database in the same run.
 *
 *   npm run -s bench:chat        (BENCH_CHAT_REQUESTS: requests per measurement, default 400)
 */
import { cpus } from 'node:os'
import { LLMock } from '@copilotkit/aimock'
import OpenAI from 'openai'
import pg from 'pg'
import { baseEnv, cpuWindow, sleep, spawnNode } from './lib.ts'
import { withService } from './serviceFixture.ts'

const REQUESTS = Number(process.env.BENCH_CHAT_REQUESTS ?? 400)

type Stats = { p50: number; p99: number; mean: number; n: number }
const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
const stats = (ms: number[]): Stats => {
  const s = [...ms].sort((a, b) => a - b)
  return { p50: round(pct(s, 50)), p99: round(pct(s, 99)), mean: round(s.reduce((a, b) => a + b, 0) / s.length), n: s.length }
}
const round = (n: number) => Math.round(n * 100) / 100

/** Runs `total` calls with `concurrency` in flight; returns each call's latency in ms. */
async function measure(concurrency: number, total: number, call: () => Promise<void>): Promise<number[]> {
  const out: number[] = []
  let next = 0
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next++ < total) {
        const t0 = performance.now()
        await call()
        out.push(performance.now() - t0)
      }
    }),
  )
  return out
}

async function main() {
  const mock = new LLMock({ port: 0, host: '127.0.0.1', logLevel: 'silent' })
  mock.on({ endpoint: 'chat', predicate: () => true }, () => ({ content: 'Noted.', usage: { prompt_tokens: 200, completion_tokens: 3 } }))
  const mockUrl = `${await mock.start()}/v1`
  const sdk = new OpenAI({ baseURL: mockUrl, apiKey: 'bench', maxRetries: 0, timeout: 60_000 })
  const env = { OPENAI_BASE_URL: mockUrl, OPENAI_API_KEY: 'bench', STARTER_CREDITS: '100000000', RATE_LIMIT_PER_IP: '100000000' }
  try {
    await withService('chat', async ({ url, apiKey, api, pid, databaseUrl }) => {
      const agent = (await api('POST', '/agents', { name: 'bench-chat', skills: [] })).body.id as string
      const headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' }
      const viaService = async () => {
        const res = await fetch(`${url}/api/v1/agents/${agent}/chat`, { method: 'POST', headers, body: JSON.stringify({ message: 'hello' }) })
        if (res.status !== 200) throw new Error(`chat answered ${res.status}: ${await res.text()}`)
        await res.arrayBuffer()
      }
      const direct = async () => {
        await sdk.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'system', content: 'You are an agent.' }, { role: 'user', content: 'hello' }], max_tokens: 1024 })
      }
      const probe = await api('POST', `/agents/${agent}/chat`, { message: 'hello' })
      if (probe.status !== 200) throw new Error(`chat answered ${probe.status}: ${JSON.stringify(probe.body)}`)
      process.stderr.write('warming up\n')
      // Warm both paths (connections, JIT, prepared statements).
      await measure(10, 100, viaService)
      await measure(10, 100, direct)
      const rows = []
      for (const concurrency of [1, 50]) {
        process.stderr.write(`measuring at ${concurrency} concurrent\n`)
        const total = concurrency === 1 ? Math.min(REQUESTS, 200) : REQUESTS
        // ABBA: each side measured twice, around the other, so drift hits both alike.
        const d1 = await measure(concurrency, total / 2, direct)
        const s1 = await measure(concurrency, total / 2, viaService)
        const s2 = await measure(concurrency, total / 2, viaService)
        const d2 = await measure(concurrency, total / 2, direct)
        const d = stats([...d1, ...d2])
        const s = stats([...s1, ...s2])
        rows.push({ concurrency, direct: d, service: s, addedP50Ms: round(s.p50 - d.p50), addedP99Ms: round(s.p99 - d.p99) })
      }
      const cost = await turnCost(pid, viaService)
      const raw = await rawUpserts(databaseUrl)
      const at50 = rows.find((r) => r.concurrency === 50)!
      const result = {
        machine: { cores: cpus().length, node: process.version },
        rows,
        cost,
        raw,
        goal: { addedP50Ms: 5, serviceP99MsAt50: 25, met: rows.every((r) => r.addedP50Ms <= 5) && at50.service.p99 <= 25 },
      }
      process.stdout.write('\none-round chat turn via the service vs a direct SDK call to the same scripted server\n')
      for (const r of rows) {
        process.stdout.write(
          `  ${String(r.concurrency).padStart(2)} concurrent: direct p50 ${r.direct.p50} ms p99 ${r.direct.p99} ms | service p50 ${r.service.p50} ms p99 ${r.service.p99} ms | added p50 ${r.addedP50Ms} ms (n=${r.service.n})\n`,
        )
      }
      process.stdout.write(`  goal (added p50 <= 5 ms, service p99 <= 25 ms at 50): ${result.goal.met ? 'met' : 'MISSED'}\n`)
      process.stdout.write(
        `  cost at 10 in flight: ${cost.turnsPerSec} turns/s, service CPU ${cost.serviceMsPerTurn} ms per turn, Postgres ${cost.postgresMsPerTurn} ms (other load ${cost.otherPct} % of a core)\n` +
          `  raw durable upserts, same database, 10 loops: ${raw.opsPerSec} per s, Postgres ${raw.postgresMsPerOp} ms each; a turn costs ${round(cost.turnsPerSec > 0 ? raw.opsPerSec / cost.turnsPerSec : 0)} upserts' time\n`,
      )
      process.stdout.write(`${JSON.stringify(result)}\n`)
    }, env)
  } finally {
    await mock.stop()
  }
}

/** Turns at 10 in flight for COST_TURNS turns, with the service's (and what it started: anvil) and Postgres's CPU. */
async function turnCost(pid: number | undefined, viaService: () => Promise<void>) {
  const turns = Number(process.env.BENCH_CHAT_COST_TURNS ?? 1000)
  const end = cpuWindow(pid)
  const t0 = performance.now()
  await measure(10, turns, viaService)
  const secs = (performance.now() - t0) / 1000
  const cpu = end()
  const perTurn = (pct: number) => round((pct / 100) * secs * 1000 / turns)
  return { turns, turnsPerSec: round(turns / secs), serviceMsPerTurn: perTurn(cpu.server), postgresMsPerTurn: perTurn(cpu.postgres), otherPct: cpu.other }
}

/** Raw durable upserts (bench/upsertWorker.ts, 10 loops, 5 s) on the service's database: the same run's baseline. */
async function rawUpserts(databaseUrl: string) {
  const c = new pg.Client({ connectionString: databaseUrl })
  await c.connect()
  await c.query('create table if not exists bench_doc (id int primary key, doc jsonb not null)')
  await c.end()
  const child = spawnNode(['bench/upsertWorker.ts'], baseEnv({ BENCH_DB_URL: databaseUrl, MODE: 'raw', CONNECTIONS: '10', WARMUP_MS: '1000', DURATION_MS: '5000' }), { stdin: true })
  const alive = () => child.proc.exitCode === null && child.proc.signalCode === null
  while (!child.stdout().includes('measuring\n') && alive()) await sleep(5)
  const end = cpuWindow(child.pid)
  const t0 = performance.now()
  while (!child.stdout().includes('"opsPerSec"') && alive()) await sleep(5)
  const secs = (performance.now() - t0) / 1000
  const cpu = end()
  child.proc.stdin!.end()
  await child.exited
  const r = JSON.parse(child.stdout().trim().split('\n').pop()!) as { opsPerSec: number; ops: number }
  return { opsPerSec: round(r.opsPerSec), postgresMsPerOp: Math.round((((cpu.postgres / 100) * secs * 1000) / r.ops) * 1000) / 1000 }
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`)
  process.exit(1)
})

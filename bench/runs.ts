/**
 * Scheduled runs at scale: N running agents with a 60-second run interval on one node (the
 * scripted model server answering at once), the service as a child process. Measures, for the
 * first scheduled tick of every agent: runs started per second and the tick-to-start delay
 * (a run's creation time minus its agent's tick due time) p50/p99; then, between ticks, the
 * service's resident memory (RSS, /proc) and its CPU while idle.
 *
 *   npm run -s bench:runs        (BENCH_RUNS_AGENTS: agents, default 10000; BENCH_RUNS_IDLE_SECONDS: idle window, default 20)
 */
import { readFileSync } from 'node:fs'
import { cpus } from 'node:os'
import pg from 'pg'
import { LLMock } from '@copilotkit/aimock'
import { withService } from './serviceFixture.ts'
import { cpuWindow, percentile, round } from './lib.ts'

const N = Number(process.env.BENCH_RUNS_AGENTS ?? 10_000)
const IDLE_SECONDS = Number(process.env.BENCH_RUNS_IDLE_SECONDS ?? 20)
const progress = (m: string) => process.stderr.write(`[runs] ${m}\n`)
const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024

/** Runs `total` jobs with `concurrency` in flight. */
async function pool(concurrency: number, total: number, job: (i: number) => Promise<void>) {
  let next = 0
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < total) await job(next++)
  }))
}

async function main() {
  const mock = new LLMock({ port: 0, host: '127.0.0.1', logLevel: 'silent' })
  mock.on({ endpoint: 'chat', predicate: () => true }, () => ({ content: 'Nothing to do.', usage: { prompt_tokens: 200, completion_tokens: 3 } }))
  const mockUrl = `${await mock.start()}/v1`
  const env = {
    OPENAI_BASE_URL: mockUrl, OPENAI_API_KEY: 'bench', STARTER_CREDITS: '1000000000', RATE_LIMIT_PER_IP: '100000000',
    AGENT_TICK_SECONDS: '60', RUN_MIN_INTERVAL_SECONDS: '60', ACTOR_CACHE_SIZE: String(Math.max(10_000, 3 * N)),
  }
  try {
    await withService('runs', async ({ api, pid, databaseUrl }) => {
      const db = new pg.Pool({ connectionString: databaseUrl, max: 2 })
      try {
        progress(`creating and starting ${N} agents (interval 60 s)`)
        const t0 = performance.now()
        await pool(16, N, async (i) => {
          const created = await api('POST', '/agents', { name: `bench-${i}`, skills: [], run_interval_seconds: 60 })
          if (created.status !== 201) throw new Error(`create answered ${created.status}: ${JSON.stringify(created.body)}`)
          const started = await api('POST', `/agents/${created.body.id}/start`)
          if (started.status !== 200) throw new Error(`start answered ${started.status}`)
        })
        progress(`set up in ${round((performance.now() - t0) / 1000, 1)} s`)
        // Each agent's first tick: its due time now, before it fires.
        const due = new Map((await db.query<{ id: string; due: Date }>(`select actor_id as id, due_at as due from actor_timer where timer_key like 'xstate.after.tick.%'`)).rows.map((r) => [r.id, new Date(r.due).getTime()]))
        const lastDue = Math.max(...due.values())
        progress(`waiting for the first ticks (the last is due in ${round((lastDue - Date.now()) / 1000, 1)} s) and their runs`)
        // The first round: each agent's first run. With many agents the next ticks start new runs
        // before the first round has ended, so the service is never idle of runs; count per agent.
        const firstRuns = `select distinct on (snapshot->'context'->>'agentId') snapshot->'context'->>'agentId' as agent, created_at as at, status
          from actor where kind = 'run' order by snapshot->'context'->>'agentId', created_at`
        for (;;) {
          const { rows } = await db.query<{ n: number }>(`select count(*) filter (where status not in ('queued', 'running'))::int as n from (${firstRuns}) f`)
          if (rows[0]!.n >= N) break
          if (Date.now() > lastDue + 300_000) throw new Error(`only ${rows[0]!.n} of ${N} first runs ended after 5 minutes`)
          await new Promise((r) => setTimeout(r, 500))
        }
        const runs = (await db.query<{ agent: string; at: Date; status: string }>(firstRuns)).rows
        const allRuns = (await db.query<{ n: number }>(`select count(*)::int as n from actor where kind = 'run'`)).rows[0]!.n
        const delays = runs.map((r) => new Date(r.at).getTime() - due.get(r.agent)!).sort((a, b) => a - b)
        const starts = runs.map((r) => new Date(r.at).getTime()).sort((a, b) => a - b)
        const spanS = (starts[starts.length - 1]! - starts[0]!) / 1000
        const completed = runs.filter((r) => r.status === 'completed').length
        const dueSpanS = (lastDue - Math.min(...due.values())) / 1000

        // Idle between ticks: the next ticks are due 60 s after the first ones.
        const nextDue = Math.min(...(await db.query<{ due: Date }>(`select due_at as due from actor_timer where timer_key like 'xstate.after.tick.%'`)).rows.map((r) => new Date(r.due).getTime()))
        const idleS = Math.min(IDLE_SECONDS, Math.max(1, (nextDue - Date.now()) / 1000 - 2))
        progress(`idle window of ${round(idleS, 1)} s`)
        const cpu = cpuWindow(pid)
        await new Promise((r) => setTimeout(r, idleS * 1000))
        const idleCpu = cpu()
        const result = {
          machine: { cores: cpus().length, node: process.version },
          agents: N,
          runs: runs.length,
          runsIncludingLaterTicks: allRuns,
          completed,
          ticksDueOverSeconds: round(dueSpanS, 1),
          runsStartedPerSecond: round(runs.length / Math.max(spanS, 0.001), 1),
          runsStartSpanSeconds: round(spanS, 1),
          tickToStartMs: { p50: round(percentile(delays, 50)), p99: round(percentile(delays, 99)), max: round(delays[delays.length - 1]!) },
          idle: { seconds: round(idleS, 1), serverCpuPctOfOneCore: idleCpu.server, postgresCpuPct: idleCpu.postgres, serverRssMb: pid ? round(rssMb(pid), 1) : null },
        }
        process.stdout.write(`\n${N} running agents, 60 s run interval, scripted model answering at once\n`)
        process.stdout.write(`  first ticks due over ${result.ticksDueOverSeconds} s; ${runs.length} runs (${completed} completed) started over ${result.runsStartSpanSeconds} s: ${result.runsStartedPerSecond} runs/s\n`)
        process.stdout.write(`  tick-to-start p50 ${result.tickToStartMs.p50} ms, p99 ${result.tickToStartMs.p99} ms, max ${result.tickToStartMs.max} ms\n`)
        process.stdout.write(`  idle between ticks (${result.idle.seconds} s): service CPU ${result.idle.serverCpuPctOfOneCore}% of a core, postgres ${result.idle.postgresCpuPct}%, service RSS ${result.idle.serverRssMb} MB\n`)
        process.stdout.write(`${JSON.stringify(result)}\n`)
      } finally {
        await db.end()
      }
    }, env)
  } finally {
    await mock.stop()
  }
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`)
  process.exit(1)
})

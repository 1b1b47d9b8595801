/**
 * Scheduled runs at scale: N running agents with a 60-second run interval (or INTERVAL) on one node (the
 * scripted model server answering at once), the service as a child process (WORKERS=2 in the
 * environment: two node processes). The agents are created, then all started as fast as the
 * service takes it; each agent's first run starts when it is started; the measured round is the second: for every agent,
 * the delay from its pending timer's due time to its second run's start (due-to-start p50/p99),
 * the second run's start minus the first's (the interval as honoured: INTERVAL is exact), and runs
 * started per second; between the two rounds, the service's resident memory (RSS, /proc) and its
 * CPU and Postgres's while idle. It reads only the API and the actor tables, so the same file
 * measures a tree that ticks (AGENT_TICK_SECONDS) and one with a due timer per agent.
 *
 *   npm run -s bench:runs        (BENCH_RUNS_AGENTS: agents, default 10000; BENCH_RUNS_INTERVAL: run interval in seconds, at
 *                                 least 60, default 60; BENCH_RUNS_IDLE_SECONDS: idle window, default 20;
 *                                 BENCH_RUNS_SUSTAIN_SECONDS: after the second round, keep measuring every later
 *                                 round this long, minute by minute, default 0; BENCH_RUNS_ACCOUNTS: accounts
 *                                 the agents are spread over, default 1)
 */
import { readFileSync } from 'node:fs'
import { cpus, loadavg } from 'node:os'
import pg from 'pg'
import { LLMock } from '@copilotkit/aimock'
import { withService } from './serviceFixture.ts'
import { cpuWindow, percentile, pool, round } from './lib.ts'

const N = Number(process.env.BENCH_RUNS_AGENTS ?? 10_000)
const IDLE_SECONDS = Number(process.env.BENCH_RUNS_IDLE_SECONDS ?? 20)
const INTERVAL = Number(process.env.BENCH_RUNS_INTERVAL ?? 60)
const SUSTAIN_SECONDS = Number(process.env.BENCH_RUNS_SUSTAIN_SECONDS ?? 0)
const ACCOUNTS = Math.max(1, Number(process.env.BENCH_RUNS_ACCOUNTS ?? 1))
const progress = (m: string) => process.stderr.write(`[runs] ${m}\n`)
const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024

async function main() {
  const mock = new LLMock({ port: 0, host: '127.0.0.1', logLevel: 'silent' })
  mock.on({ endpoint: 'chat', predicate: () => true }, () => ({ content: 'Nothing to do.', usage: { prompt_tokens: 200, completion_tokens: 3 } }))
  const mockUrl = `${await mock.start()}/v1`
  const env = {
    OPENAI_BASE_URL: mockUrl, OPENAI_API_KEY: 'bench', STARTER_CREDITS: '1000000000', RATE_LIMIT_PER_IP: '100000000',
    RUN_MIN_INTERVAL_SECONDS: '60', ACTOR_CACHE_SIZE: String(Math.max(10_000, 3 * N)),
  }
  try {
    await withService('runs', async ({ api, pid, databaseUrl, logs, newAccountApi }) => {
      const db = new pg.Pool({ connectionString: databaseUrl, max: 2 })
      try {
        // Created first, then started as fast as the service takes starts: a started agent's first
        // run begins at once, so the second round falls due about as densely as the starts came
        // (10,000 agents started within 60 s: more than the 167 runs/s a 60 s interval needs).
        // The agents spread over ACCOUNTS accounts, round robin (one account's row is otherwise held
        // and charged by every run).
        const apis = [api]
        await pool(8, ACCOUNTS - 1, async () => void apis.push(await newAccountApi()))
        progress(`creating ${N} agents (interval ${INTERVAL} s) in ${apis.length} account(s)`)
        const t0 = performance.now()
        const ids: string[] = new Array(N)
        const apiOf = (i: number) => apis[i % apis.length]!
        await pool(16, N, async (i) => {
          const created = await apiOf(i)('POST', '/agents', { name: `bench-${i}`, skills: [], run_interval_seconds: INTERVAL })
          if (created.status !== 201) throw new Error(`create answered ${created.status}: ${JSON.stringify(created.body)}`)
          ids[i] = created.body.id
        })
        progress(`created in ${round((performance.now() - t0) / 1000, 1)} s; starting them`)
        const t1 = performance.now()
        await pool(32, N, async (i) => {
          const started = await apiOf(i)('POST', `/agents/${ids[i]}/start`)
          if (started.status !== 200) throw new Error(`start answered ${started.status}`)
        })
        progress(`started in ${round((performance.now() - t1) / 1000, 1)} s`)
        // A service that died leaves the waits below waiting: fail with its last words instead.
        const alive = () => {
          if (pid === undefined) return
          try {
            process.kill(pid, 0)
          } catch {
            throw new Error(`the service exited:\n${logs().slice(-4000)}`)
          }
        }
        // Each agent's scheduled runs, oldest first (the created_at of a run actor is its start),
        // read as they come: the runs created since the last read (with a 5 s overlap, for a
        // transaction that committed after later ones; rows are kept by id) and the runs open now.
        // Reading every run each time cost Postgres about a third of a core at 10,000 agents and
        // grew with every round: the harness was competing with what it measured.
        const seen = new Set<string>()
        const byAgent = new Map<string, { agent: string; at: Date[]; open: number }>()
        let since = new Date(0)
        const runsOf = async () => {
          const { rows: fresh } = await db.query<{ id: string; agent: string; at: Date }>(
            `select id, snapshot->'context'->>'agentId' as agent, created_at as at from actor
              where created_at > $1 and kind = 'run' order by created_at`, [new Date(since.getTime() - 5_000)])
          for (const r of fresh) {
            if (seen.has(r.id)) continue
            seen.add(r.id)
            const row = byAgent.get(r.agent) ?? { agent: r.agent, at: [], open: 0 }
            const at = new Date(r.at)
            row.at.push(at)
            // A run that committed after later ones: back in order.
            if (row.at.length > 1 && row.at[row.at.length - 2]!.getTime() > at.getTime()) row.at.sort((a, b) => a.getTime() - b.getTime())
            byAgent.set(r.agent, row)
          }
          if (fresh.length) since = new Date(fresh[fresh.length - 1]!.at)
          const { rows: open } = await db.query<{ agent: string }>(
            `select snapshot->'context'->>'agentId' as agent from actor where kind = 'run' and status in ('queued', 'running')`)
          for (const row of byAgent.values()) row.open = 0
          for (const o of open) {
            const row = byAgent.get(o.agent)
            if (row) row.open++
          }
          return [...byAgent.values()]
        }
        const round1Ended = (rows: Awaited<ReturnType<typeof runsOf>>, n: number) => rows.filter((r) => r.at.length >= n && (r.at.length > n || r.open === 0)).length
        progress('waiting for every first run to end')
        const deadline = Date.now() + 600_000
        for (;;) {
          alive()
          const ended = round1Ended(await runsOf(), 1)
          if (ended >= N) break
          if (Date.now() > deadline) throw new Error(`only ${ended} of ${N} first runs ended after 10 minutes`)
          await new Promise((r) => setTimeout(r, 500))
        }
        // The timer each agent holds now: the one that starts its second run.
        const timers = `select t.actor_id as id, min(t.due_at) as due from actor_timer t join actor a on a.id = t.actor_id and a.kind = 'agent' group by 1`
        const due = new Map((await db.query<{ id: string; due: Date }>(timers)).rows.map((r) => [r.id, new Date(r.due).getTime()]))
        const firstDue = Math.min(...due.values())
        const idleS = Math.min(IDLE_SECONDS, Math.max(1, (firstDue - Date.now()) / 1000 - 2))
        progress(`${due.size} timers pending; idle window of ${round(idleS, 1)} s`)
        const cpu = cpuWindow(pid)
        await new Promise((r) => setTimeout(r, idleS * 1000))
        const idleCpu = cpu()
        const rss = pid ? round(rssMb(pid), 1) : null
        progress('waiting for every second run to start')
        // Transactions (each statement outside a transaction is one) and Postgres CPU over the second round, per run.
        const xacts = async () => Number((await db.query<{ n: string }>(`select xact_commit + xact_rollback as n from pg_stat_database where datname = current_database()`)).rows[0]!.n)
        const runCount = async () => Number((await db.query<{ n: string }>(`select count(*) as n from actor where kind = 'run'`)).rows[0]!.n)
        const [x0, r0] = [await xacts(), await runCount()]
        const roundCpu = cpuWindow(pid)
        const roundStart = performance.now()
        let rows = await runsOf()
        for (;;) {
          alive()
          rows = await runsOf()
          if (rows.filter((r) => r.at.length >= 2).length >= N) break
          if (Date.now() > deadline + 300_000) throw new Error('second runs did not all start in time')
          await new Promise((r) => setTimeout(r, 500))
        }
        const secondRoundCpu = roundCpu()
        const roundSeconds = (performance.now() - roundStart) / 1000
        const [x1, r1] = [await xacts(), await runCount()]
        const roundRuns = Math.max(1, r1 - r0)
        // What the schedule cost in agent transitions: timer firings, and checks that found nothing due.
        const { rows: [cost] } = await db.query<{ firings: number; notDue: number; runs: number }>(
          `select count(*) filter (where j.event->>'type' in ('xstate.after.tick.agent.running', 'agent.due'))::int as firings,
                  count(*) filter (where j.event->>'reason' = 'not_due')::int as "notDue",
                  (select count(*)::int from actor where kind = 'run') as runs
             from actor_journal j join actor a on a.id = j.actor_id and a.kind = 'agent'`)
        const seconds = rows.map((r) => ({ agent: r.agent, first: new Date(r.at[0]!).getTime(), second: new Date(r.at[1]!).getTime() }))
        const delays = seconds.filter((r) => due.has(r.agent)).map((r) => r.second - due.get(r.agent)!).sort((a, b) => a - b)
        const intervals = seconds.map((r) => r.second - r.first).sort((a, b) => a - b)
        const starts = seconds.map((r) => r.second).sort((a, b) => a - b)
        // Every run of the window (first rounds, second rounds, later ones of the earliest agents): what the node sustained.
        const all = rows.flatMap((r) => r.at.map((t) => new Date(t).getTime()))
        const allSpanS = (Math.max(...all) - Math.min(...all)) / 1000
        const firsts = seconds.map((r) => r.first)
        const firstSpanS = (Math.max(...firsts) - Math.min(...firsts)) / 1000
        const spanS = (starts[starts.length - 1]! - starts[0]!) / 1000
        const dueSpanS = (Math.max(...due.values()) - firstDue) / 1000
        const result = {
          machine: { cores: cpus().length, node: process.version, load1: round(loadavg()[0]!, 1) },
          agents: N,
          accounts: ACCOUNTS,
          intervalSeconds: INTERVAL,
          agentsWithTimer: due.size,
          runs: seconds.length,
          secondRunsDueOverSeconds: round(dueSpanS, 1),
          runsStartedPerSecond: round(seconds.length / Math.max(spanS, 0.001), 1),
          runsStartSpanSeconds: round(spanS, 1),
          firstRound: { spanSeconds: round(firstSpanS, 1), runsPerSecond: round(N / Math.max(firstSpanS, 0.001), 1) },
          window: { runs: all.length, seconds: round(allSpanS, 1), runsPerSecond: round(all.length / Math.max(allSpanS, 0.001), 1) },
          dueToStartMs: { p50: round(percentile(delays, 50)), p99: round(percentile(delays, 99)), max: round(delays[delays.length - 1]!) },
          intervalMs: { p1: round(percentile(intervals, 1)), p50: round(percentile(intervals, 50)), p99: round(percentile(intervals, 99)) },
          schedule: { timerFirings: cost!.firings, notDueChecks: cost!.notDue, runs: cost!.runs },
          idle: { seconds: round(idleS, 1), serverCpuPctOfOneCore: idleCpu.server, postgresCpuPct: idleCpu.postgres, serverRssMb: rss },
          // The bench's own reads (runsOf every 500 ms: the runs since the last read and the open ones) are in the transactions too: a few per second, not per run.
          secondRound: {
            runs: roundRuns, seconds: round(roundSeconds, 1), transactionsPerRun: round((x1 - x0) / roundRuns, 2),
            postgresCpuMsPerRun: round((secondRoundCpu.postgres / 100) * roundSeconds * 1000 / roundRuns, 2),
            serviceCpuMsPerRun: round((secondRoundCpu.server / 100) * roundSeconds * 1000 / roundRuns, 2), machineCpuPct: secondRoundCpu.machine,
          },
        }
        process.stdout.write(`\n${N} running agents, ${INTERVAL} s run interval, scripted model answering at once\n`)
        process.stdout.write(`  second runs due over ${result.secondRunsDueOverSeconds} s; ${seconds.length} started over ${result.runsStartSpanSeconds} s: ${result.runsStartedPerSecond} runs/s\n`)
        process.stdout.write(`  first runs (each at its agent's start) over ${result.firstRound.spanSeconds} s: ${result.firstRound.runsPerSecond} runs/s; all ${all.length} runs over ${result.window.seconds} s: ${result.window.runsPerSecond} runs/s\n`)
        process.stdout.write(`  due-to-start p50 ${result.dueToStartMs.p50} ms, p99 ${result.dueToStartMs.p99} ms, max ${result.dueToStartMs.max} ms\n`)
        process.stdout.write(`  first to second run p1 ${result.intervalMs.p1} ms, p50 ${result.intervalMs.p50} ms, p99 ${result.intervalMs.p99} ms (${INTERVAL * 1000} asked)\n`)
        process.stdout.write(`  schedule: ${cost!.firings} timer firings and ${cost!.notDue} checks that found nothing due, for ${cost!.runs} runs\n`)
        process.stdout.write(`  second round: ${result.secondRound.runs} runs in ${result.secondRound.seconds} s, ${result.secondRound.transactionsPerRun} transactions per run, Postgres ${result.secondRound.postgresCpuMsPerRun} ms and the service ${result.secondRound.serviceCpuMsPerRun} ms of CPU per run (machine ${result.secondRound.machineCpuPct}% busy)\n`)
        process.stdout.write(`  idle between rounds (${result.idle.seconds} s): service CPU ${result.idle.serverCpuPctOfOneCore}% of a core, postgres ${result.idle.postgresCpuPct}%, service RSS ${result.idle.serverRssMb} MB\n`)
        process.stdout.write(`${JSON.stringify(result)}\n`)
        if (SUSTAIN_SECONDS > 0) {
          // Every later round, for SUSTAIN_SECONDS: each run's delay past its due time (its agent's
          // previous run's start plus the interval), per minute, so a schedule falling behind shows
          // as delays that grow from one minute to the next.
          progress(`sustaining for ${SUSTAIN_SECONDS} s`)
          const w0 = Date.now()
          const [sx0, sr0] = [await xacts(), await runCount()]
          const sustainCpu = cpuWindow(pid)
          while (Date.now() - w0 < SUSTAIN_SECONDS * 1000) {
            alive()
            await new Promise((r) => setTimeout(r, 5000))
          }
          const used = sustainCpu()
          const windowS = (Date.now() - w0) / 1000
          const [sx1, sr1] = [await xacts(), await runCount()]
          const late = (await runsOf()).flatMap((r) => {
            const at = r.at.map((t) => new Date(t).getTime())
            return at.flatMap((t, i) => (i > 0 && t >= w0 && t < w0 + SUSTAIN_SECONDS * 1000 ? [{ at: t, delay: t - at[i - 1]! - INTERVAL * 1000 }] : []))
          })
          const byMinute = new Map<number, number[]>()
          for (const l of late) byMinute.set(Math.floor((l.at - w0) / 60_000), [...(byMinute.get(Math.floor((l.at - w0) / 60_000)) ?? []), l.delay])
          const minutes = [...byMinute].sort(([a], [b]) => a - b).map(([m, d]) => {
            d.sort((a, b) => a - b)
            return { minute: m + 1, runs: d.length, p50: round(percentile(d, 50)), p99: round(percentile(d, 99)), max: round(d[d.length - 1]!) }
          })
          const delays = late.map((l) => l.delay).sort((a, b) => a - b)
          const sustained = {
            seconds: round(windowS, 1), runs: sr1 - sr0, runsPerSecond: round((sr1 - sr0) / windowS, 1),
            dueToStartMs: { p50: round(percentile(delays, 50)), p99: round(percentile(delays, 99)), max: round(delays[delays.length - 1]!) },
            transactionsPerRun: round((sx1 - sx0) / Math.max(1, sr1 - sr0), 2),
            postgresCpuMsPerRun: round((used.postgres / 100) * windowS * 1000 / Math.max(1, sr1 - sr0), 2),
            serviceCpuMsPerRun: round((used.server / 100) * windowS * 1000 / Math.max(1, sr1 - sr0), 2), machineCpuPct: used.machine,
            minutes,
          }
          process.stdout.write(`  sustained ${sustained.seconds} s: ${sustained.runs} runs, ${sustained.runsPerSecond} runs/s; due-to-start p50 ${sustained.dueToStartMs.p50} ms, p99 ${sustained.dueToStartMs.p99} ms, max ${sustained.dueToStartMs.max} ms; ${sustained.transactionsPerRun} transactions, Postgres ${sustained.postgresCpuMsPerRun} ms and the service ${sustained.serviceCpuMsPerRun} ms of CPU per run (machine ${sustained.machineCpuPct}% busy)\n`)
          for (const m of minutes) process.stdout.write(`    minute ${m.minute}: ${m.runs} runs, due-to-start p50 ${m.p50} ms, p99 ${m.p99} ms, max ${m.max} ms\n`)
          process.stdout.write(`${JSON.stringify({ sustained })}\n`)
        }
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

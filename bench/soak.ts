/**
 * The soak: N running agents on a 60-second run interval over many accounts for M minutes, the
 * service as a child process (WORKERS from the environment) with the scripted model server
 * answering at once, and the actors' retention windows shortened by settings so that compaction's
 * steady state shows within the run. The agents are created, then started as fast as the service
 * takes it (the soak's clock starts with the first start); every minute it reads the runs that
 * started (by a created_at cursor: runs started per second, due-to-start p50 and p99, a run's due
 * time being its agent's previous run's start plus the interval), Postgres's CPU (this database's
 * backends and the cluster's own processes) and the service's per run, the database's size, each
 * runtime table's rows (the statistics' estimate), total size and dead tuples, and the
 * compaction's backlog (null when the actor table has no `compact_after` / `compacted_at`). At the
 * end it evaluates the goals (bench/soakProbe.ts) and prints one JSON line.
 *
 *   npm run -s bench:soak        (BENCH_SOAK_AGENTS: agents, default 10000; BENCH_SOAK_ACCOUNTS: accounts the
 *                                 agents are spread over, round robin, default 100, 1 = one account;
 *                                 BENCH_SOAK_MINUTES: default 60; BENCH_SOAK_RETENTION_MINUTES: the service's
 *                                 ACTOR_RETENTION_MINUTES, ACTOR_RETENTION_QUIET_MINUTES and
 *                                 INBOX_RETENTION_HOURS (as hours), default 5;
 *                                 BENCH_SOAK_SWEEP_SECONDS: its RETENTION_SWEEP_SECONDS, default 10)
 */
import { cpus, loadavg } from 'node:os'
import pg from 'pg'
import { LLMock } from '@copilotkit/aimock'
import { withService } from './serviceFixture.ts'
import { cpuWindow, pool, postmasterOf, round, scopePostgres, sleep } from './lib.ts'
import { evaluateGoals, hasCompactionColumns, probeDatabase, runTracker, tableHeader, tableRow, type SoakMinute } from './soakProbe.ts'

const N = Number(process.env.BENCH_SOAK_AGENTS ?? 10_000)
const ACCOUNTS = Number(process.env.BENCH_SOAK_ACCOUNTS ?? 100)
const MINUTES = Number(process.env.BENCH_SOAK_MINUTES ?? 60)
const RETENTION_MINUTES = Number(process.env.BENCH_SOAK_RETENTION_MINUTES ?? 5)
const SWEEP_SECONDS = Number(process.env.BENCH_SOAK_SWEEP_SECONDS ?? 10)
const INTERVAL = 60
for (const [name, value, min] of [['BENCH_SOAK_AGENTS', N, 1], ['BENCH_SOAK_ACCOUNTS', ACCOUNTS, 1], ['BENCH_SOAK_MINUTES', MINUTES, 1], ['BENCH_SOAK_RETENTION_MINUTES', RETENTION_MINUTES, 1], ['BENCH_SOAK_SWEEP_SECONDS', SWEEP_SECONDS, 1]] as const) {
  if (!Number.isInteger(value) || value < min) throw new Error(`${name} must be a whole number of at least ${min} (got ${value})`)
}
const progress = (m: string) => process.stderr.write(`[soak] ${m}\n`)
const out = (m: string) => process.stdout.write(`${m}\n`)

type Service = Parameters<Parameters<typeof withService>[1]>[0]

/**
 * The accounts and their agents, created over the API; the agents then started. Resolves the
 * soak's t0 (the first start) and a CPU window opened then (the first minute's holds the starts).
 */
async function createAndStart({ api, newAccountApi, pid }: Service) {
  const apis = [api]
  await pool(8, Math.min(ACCOUNTS, N) - 1, async () => void apis.push(await newAccountApi()))
  progress(`creating ${N} agents (interval ${INTERVAL} s) in ${apis.length} account(s)`)
  const c0 = performance.now()
  const ids: string[] = new Array(N)
  const apiOf = (i: number) => apis[i % apis.length]!
  await pool(16, N, async (i) => {
    const created = await apiOf(i)('POST', '/agents', { name: `soak-${i}`, skills: [], run_interval_seconds: INTERVAL })
    if (created.status !== 201) throw new Error(`create answered ${created.status}: ${JSON.stringify(created.body)}`)
    ids[i] = created.body.id
  })
  progress(`created in ${round((performance.now() - c0) / 1000, 1)} s; starting them`)
  const t0 = Date.now()
  const cpu = cpuWindow(pid)
  await pool(32, N, async (i) => {
    const started = await apiOf(i)('POST', `/agents/${ids[i]}/start`)
    if (started.status !== 200) throw new Error(`start answered ${started.status}: ${JSON.stringify(started.body)}`)
  })
  progress(`started in ${round((Date.now() - t0) / 1000, 1)} s`)
  return { t0, cpu }
}

/** The minutes of the soak, each printed as a table row when its runs are in (6 s after its end). */
async function soak(s: Service, db: pg.Pool, { t0, cpu: firstCpu }: Awaited<ReturnType<typeof createAndStart>>, compaction: boolean): Promise<SoakMinute[]> {
  // A service that died leaves the soak waiting: fail with its last words instead.
  const alive = () => {
    if (s.pid === undefined) return
    try {
      process.kill(s.pid, 0)
    } catch {
      throw new Error(`the service exited:\n${s.logs().slice(-4000)}`)
    }
  }
  const tracker = runTracker(db, t0, INTERVAL * 1000)
  const pollUntil = async (until: number) => {
    for (;;) {
      alive()
      await tracker.poll()
      if (Date.now() >= until) return
      await sleep(Math.min(2_000, until - Date.now()))
    }
  }
  const minutes: SoakMinute[] = []
  let cpu = firstCpu
  out(tableHeader())
  for (let minute = 1; minute <= MINUTES; minute++) {
    const end = t0 + minute * 60_000
    await pollUntil(end)
    const used = cpu()
    cpu = cpuWindow(s.pid)
    // A server without autovacuum (this machine's test cluster) never reuses what retention
    // frees: the bench vacuums the tables it reads each minute instead, as autovacuum would (its
    // time is Postgres's, counted in the next minute's CPU).
    if (standInVacuum) await db.query(`vacuum (analyze) ${VACUUMED.join(', ')}`)
    const probe = await probeDatabase(db, compaction)
    // Runs whose transactions began before the minute's end and committed after it: in the next reads.
    await pollUntil(end + 6_000)
    const runs = tracker.minute(minute)
    const perRun = (ms: number) => (runs.runs ? round(ms / runs.runs, 2) : null)
    const row: SoakMinute = {
      minute, runsPerSecond: round(runs.runs / 60, 1), dueToStartP99Ms: runs.p99, postgresCpuMsPerRun: perRun(used.postgresMs),
      serviceCpuMsPerRun: perRun(used.serverMs), databaseBytes: probe.databaseBytes, runs: runs.runs, dueToStartP50Ms: runs.p50,
      backlog: probe.backlog, deadTuples: probe.deadTuples, tables: probe.tables, machineCpuPct: used.machine,
      harnessQueryMs: round(tracker.takeQueryMs() + probe.queryMs, 0), backlogQueryMs: probe.backlogQueryMs,
    }
    minutes.push(row)
    out(tableRow(row))
    progress(`minute ${minute}: ${runs.runs} runs (${runs.scheduled} with a due time), machine ${used.machine}% busy, load ${round(loadavg()[0]!, 1)}, the bench's reads ${row.harnessQueryMs} ms`)
  }
  return minutes
}

/** The tables the stand-in for autovacuum vacuums every minute (where the runs' rows go). */
const VACUUMED = ['actor', 'actor_journal', 'actor_inbox', 'actor_timer', 'effect', 'account_event', 'chat_message', 'credit_entry', 'credit_reservation', 'credit_stripe', 'account', 'webhook_delivery']
let standInVacuum = false

async function main() {
  const mock = new LLMock({ port: 0, host: '127.0.0.1', logLevel: 'silent' })
  mock.on({ endpoint: 'chat', predicate: () => true }, () => ({ content: 'Nothing to do.', usage: { prompt_tokens: 200, completion_tokens: 3 } }))
  const mockUrl = `${await mock.start()}/v1`
  const env = {
    OPENAI_BASE_URL: mockUrl, OPENAI_API_KEY: 'bench', STARTER_CREDITS: '1000000000', RATE_LIMIT_PER_IP: '100000000',
    RUN_MIN_INTERVAL_SECONDS: '60', ACTOR_CACHE_SIZE: String(Math.max(10_000, 3 * N)),
    // Every retention window at RETENTION_MINUTES: the ended actors' (compaction) and the running
    // agents' applied inbox events' (a service without these settings ignores them).
    ACTOR_RETENTION_MINUTES: String(RETENTION_MINUTES), ACTOR_RETENTION_QUIET_MINUTES: String(RETENTION_MINUTES),
    INBOX_RETENTION_HOURS: String(RETENTION_MINUTES / 60), RETENTION_SWEEP_SECONDS: String(SWEEP_SECONDS),
    // The agents' own history (two journal entries and an effect a run) at the same window.
    ACTOR_LIVE_HISTORY_HOURS: String(RETENTION_MINUTES / 60),
  }
  try {
    await withService('soak', async (s) => {
      const db = new pg.Pool({ connectionString: s.databaseUrl, max: 2 })
      try {
        // Postgres's CPU: this database's backends and the cluster's own processes (checkpointer,
        // WAL writer, autovacuum), not other databases' backends on a shared machine.
        const { rows: [be] } = await db.query<{ pid: number; db: string; autovacuum: string }>(
          `select pg_backend_pid() as pid, current_database() as db, current_setting('autovacuum') as autovacuum`)
        const postmaster = postmasterOf(be!.pid)
        if (postmaster > 1) scopePostgres(postmaster, be!.db)
        const compaction = await hasCompactionColumns(db)
        const settings = { retentionMinutes: RETENTION_MINUTES, sweepSeconds: SWEEP_SECONDS, workers: Number(process.env.WORKERS ?? 1), autovacuum: be!.autovacuum, vacuumedByBench: be!.autovacuum !== 'on' && process.env.BENCH_SOAK_VACUUM !== 'off', compactionColumns: compaction }
        progress(`settings ${JSON.stringify(settings)}`)
        standInVacuum = be!.autovacuum !== 'on' && process.env.BENCH_SOAK_VACUUM !== 'off'
        if (be!.autovacuum !== 'on') progress(`autovacuum is off on this server: ${standInVacuum ? 'the bench vacuums the tables each minute instead (BENCH_SOAK_VACUUM=off: never)' : 'dead tuples stay until something vacuums'}`)
        if (!compaction) progress('no actor.compact_after / compacted_at: the backlog prints as null')
        const minutes = await soak(s, db, await createAndStart(s), compaction)
        const goals = evaluateGoals(minutes, N, INTERVAL, RETENTION_MINUTES)
        out(`\n${N} agents over ${Math.min(ACCOUNTS, N)} account(s), ${INTERVAL} s run interval, ${MINUTES} minute(s), retention ${RETENTION_MINUTES} min, sweep every ${SWEEP_SECONDS} s`)
        for (const g of goals) out(`  ${g.verdict}: ${g.goal} (${g.detail})`)
        const machine = { cores: cpus().length, node: process.version, load1: round(loadavg()[0]!, 1) }
        out(JSON.stringify({ agents: N, accounts: Math.min(ACCOUNTS, N), minutes, settings, goals, machine }))
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

/**
 * Interval automations at scale (issue 17): N automations of one running agent on one node, all
 * due at the same moment (`startAt`), each an interval of 3600 s whose action is the read-only
 * tool `get_agent` (granted by the always-on `portfolio` skill, answered from Postgres with no
 * chain call), so exactly one firing each falls in the window. The service runs as a child
 * process. The automations are created over the API (`POST /automations`, 16 in flight), after a
 * calibration batch on a second agent (its automations due an hour later, never counted) that
 * sets how far ahead `startAt` must be.
 *
 * Two scenarios in the same run, each on a fresh database: `plain`, and `kill -9`, where the
 * service is killed with SIGKILL once half of the firings are done and started again at once
 * with the same DATA_DIR and DATABASE_URL. For each: the time from the due moment until every
 * automation has fired (its first firing record, `runCount` 1), firings per second, due-to-fired
 * p50/p99, doubled (more than one `automation.fire` effect, firing record or `fire.*` journal
 * entry for one automation: must be 0), lost (never fired: must be 0), service CPU per firing
 * (from /proc, the killed process until its kill plus the restarted one over its whole life,
 * boot included), and transactions per firing (pg_stat_database). Side by side, the raw durable
 * upsert rate of bench/upsertWorker.ts (MODE=raw, 10 loops) on the same server.
 *
 *   npm run -s bench:automations   (BENCH_AUTOMATIONS: default 10000; BENCH_AUTOMATIONS_SCENARIOS: plain,kill (default both);
 *                                   BENCH_SERVICE_NODE_ARGS: extra node flags for the service, e.g. --cpu-prof;
 *                                   BENCH_STATEMENT_COUNTS=1: statements per firing by statement, see bench/experiments/countStatements.ts)
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { cpus, tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { adminCreateAccount, kill9, killServerHard, startServer, stopServer, type ServerProcess } from '../test/support/server.ts'
import { apiClient, type Api } from '../test/support/app.ts'
import { ROOT, baseEnv, createDatabase, cpuWindow, dropAllDatabases, percentile, pool, postmasterOf, round, scopePostgres, sleep, spawnNode } from './lib.ts'

const N = Number(process.env.BENCH_AUTOMATIONS ?? 10_000)
const SCENARIOS = (process.env.BENCH_AUTOMATIONS_SCENARIOS ?? 'plain,kill').split(',').map((s) => s.trim()) as Array<'plain' | 'kill'>
const CONCURRENCY = 16
const CALIBRATION = Math.min(200, Math.max(20, Math.round(N / 50)))
const TIMEOUT_MS = Number(process.env.BENCH_AUTOMATIONS_TIMEOUT_S ?? 300) * 1000
const COUNT_STATEMENTS = process.env.BENCH_STATEMENT_COUNTS === '1'
const progress = (m: string) => process.stderr.write(`[automations] ${new Date().toISOString().slice(11, 19)} ${m}\n`)

/** The cumulative statement counts bench/experiments/countStatements.ts wrote for process `pid`. */
function readStatements(dir: string, pid: number): Record<string, number> {
  try {
    return JSON.parse(readFileSync(join(dir, `stmts-${pid}.json`), 'utf8')) as Record<string, number>
  } catch {
    return {}
  }
}

/** utime + stime of one process in ticks (its whole life so far); 0 once it is gone. */
function processTicks(pid: number): number {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const fields = f.slice(f.lastIndexOf(')') + 2).split(' ')
    return Number(fields[11]) + Number(fields[12])
  } catch {
    return 0
  }
}

const body = (agentId: string, i: number, startAt: string) => ({
  agent_id: agentId, name: `bench-${i}`,
  trigger: { type: 'interval', everySeconds: 3600, startAt },
  action: { type: 'tool_call', tool: 'get_agent', args: {} },
})

async function createAll(api: Api, agentId: string, n: number, startAt: string, offset = 0) {
  await pool(CONCURRENCY, n, async (i) => {
    const r = await api('POST', '/automations', body(agentId, offset + i, startAt))
    if (r.status !== 201) throw new Error(`POST /automations answered ${r.status}: ${JSON.stringify(r.body)}`)
  })
}

async function rawUpsertRate(): Promise<{ opsPerSec: number; p50Ms: number }> {
  const url = await createDatabase(`bench_autoups_${Date.now()}`)
  const c = new pg.Client({ connectionString: url })
  await c.connect()
  await c.query('create table bench_doc (id int primary key, doc jsonb not null)')
  await c.end()
  const child = spawnNode(['bench/upsertWorker.ts'], baseEnv({ BENCH_DB_URL: url, MODE: 'raw', CONNECTIONS: '10', WARMUP_MS: '2000', DURATION_MS: '6000' }), { stdin: true })
  const alive = () => child.proc.exitCode === null && child.proc.signalCode === null
  while (!child.stdout().includes('"opsPerSec"') && alive()) await sleep(20)
  child.proc.stdin!.end()
  if ((await child.exited) !== 0) throw new Error(`upsert worker failed:\n${child.stderr().slice(-3000)}`)
  return JSON.parse(child.stdout().trim().split('\n').pop()!)
}

type Result = {
  scenario: 'plain' | 'kill'
  automations: number
  createSeconds: number
  createPerSecond: number
  allFiredAfterDueSeconds: number
  firingsPerSecond: number
  dueToFiredMs: { min: number; p50: number; p99: number; max: number }
  fired: number
  doubled: number
  lost: number
  effects: number
  stages: { dueToExecutingMs: { p50: number; p99: number }; executingToFiredMs: { p50: number; p99: number } }
  restartMs: number | null
  dueSpreadMs: number[]
  firedAtKill: number | null
  serviceCpuMsPerFiring: number
  serviceCpuPctOfOneCore: number
  postgresCpuPct: number
  /** Everything else on the machine during the window (other users' work), % of one core. */
  otherCpuPct: number
  transactionsPerFiring: number
  /** BENCH_STATEMENT_COUNTS=1, plain scenario: statements the service sent per firing, by statement. */
  statementsPerFiring: Record<string, number> | null
}

async function scenario(kind: 'plain' | 'kill'): Promise<Result> {
  const dbName = `bench_auto_${kind}_${Date.now()}`
  const databaseUrl = await createDatabase(dbName)
  const dataDir = mkdtempSync(join(tmpdir(), `bench-auto-${kind}-`))
  const env: Record<string, string> = {
    DATABASE_URL: databaseUrl, DATA_DIR: dataDir, LOG_LEVEL: 'warn', RATE_LIMIT_PER_KEY: '100000000', RATE_LIMIT_PER_IP: '100000000',
    STARTER_CREDITS: '1000000000', OPENAI_API_KEY: 'bench', OPENAI_BASE_URL: 'http://127.0.0.1:9/v1',
    ACTOR_CACHE_SIZE: String(Math.max(10_000, 3 * N)), AUTOMATION_MIN_INTERVAL_SECONDS: '60',
  }
  const nodeArgs = [process.env.BENCH_SERVICE_NODE_ARGS ?? '']
  if (COUNT_STATEMENTS) {
    nodeArgs.push(`--import ${join(ROOT, 'bench/experiments/countStatements.ts')}`)
    env.STATEMENT_COUNT_DIR = dataDir
  }
  if (nodeArgs.join('').trim()) env.NODE_OPTIONS = nodeArgs.join(' ').trim()
  const servers: ServerProcess[] = []
  const db = new pg.Pool({ connectionString: databaseUrl, max: 2 })
  // The "pg" CPU column: this cluster's processes, and among client backends only the bench databases'.
  scopePostgres(postmasterOf((await db.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid), 'bench_auto_')
  try {
    let server = await startServer(env)
    servers.push(server)
    const { apiKey } = await adminCreateAccount(env)
    const api = apiClient(`${server.url}/api/v1`, apiKey)
    const newAgent = async (name: string) => {
      const a = await api('POST', '/agents', { name, skills: [] })
      if (a.status !== 201) throw new Error(`POST /agents answered ${a.status}: ${JSON.stringify(a.body)}`)
      if ((await api('POST', `/agents/${a.body.id}/start`)).status !== 200) throw new Error('start failed')
      return a.body.id as string
    }
    const agentId = await newAgent('bench-automations')
    const calibrationAgent = await newAgent('bench-calibration')

    // Calibration: the creation rate, on automations due in an hour (never counted).
    // The first half warms the service up; the rate is the second half's.
    const later = new Date(Date.now() + 3_600_000).toISOString()
    await createAll(api, calibrationAgent, CALIBRATION, later, N)
    const c0 = performance.now()
    await createAll(api, calibrationAgent, CALIBRATION, later, N + CALIBRATION)
    const rate = CALIBRATION / ((performance.now() - c0) / 1000)
    const dueAt = Date.now() + Math.ceil((1.4 * N) / rate) * 1000 + 10_000
    const startAt = new Date(dueAt).toISOString()
    progress(`${kind}: creating ${N} automations at ~${round(rate, 0)}/s, all due at ${startAt.slice(11, 19)}`)
    const t0 = performance.now()
    await createAll(api, agentId, N, startAt)
    const createSeconds = (performance.now() - t0) / 1000
    const wait = dueAt - Date.now()
    if (wait < 1000) throw new Error(`creation ended ${-wait} ms before the due moment: too late`)
    progress(`${kind}: created in ${round(createSeconds, 1)} s (${round(N / createSeconds, 0)}/s); ${round(wait / 1000, 1)} s until due`)
    // The timer rows: due at now() + the delay planned from startAt, so within milliseconds of it.
    const { rows: [spread] } = await db.query<{ n: number; lo: number; hi: number }>(
      `select count(*)::int as n, extract(epoch from min(due_at))::float8 * 1000 as lo, extract(epoch from max(due_at))::float8 * 1000 as hi
         from actor_timer t join actor a on a.id = t.actor_id where a.kind = 'automation' and a.snapshot->'context'->>'agentId' = $1`, [agentId])
    const dueSpreadMs = [round(spread!.lo - dueAt, 1), round(spread!.hi - dueAt, 1)]
    progress(`${spread!.n} timers due from ${dueSpreadMs[0]} to ${dueSpreadMs[1]} ms around startAt`)
    if (spread!.n !== N) throw new Error(`${spread!.n} timers for ${N} automations`)

    await sleep(Math.max(0, dueAt - Date.now() - 300))
    const xact = async () => Number((await db.query(`select xact_commit + xact_rollback as n from pg_stat_database where datname = $1`, [dbName])).rows[0].n)
    const x0 = await xact()
    let cpu = cpuWindow(server.child.pid)
    let serviceTicks = 0
    let pgPctSeconds = 0
    let otherPctSeconds = 0
    let cpuSince = performance.now()
    const pid0 = server.child.pid!
    const statements0 = COUNT_STATEMENTS ? readStatements(dataDir, pid0) : {}
    const ticks0 = processTicks(pid0)
    let restartMs: number | null = null
    let firedAtKill: number | null = null
    // Progress: the firing effects done (the transition that applies fire.done commits with it).
    const firedCount = async () => Number((await db.query(`select count(distinct actor_id)::int as n from effect where kind = 'automation.fire' and status = 'done'`)).rows[0].n)
    const deadline = dueAt + TIMEOUT_MS
    let done = 0
    for (;;) {
      done = await firedCount()
      if (done >= N) break
      if (Date.now() > deadline) break
      if (kind === 'kill' && firedAtKill === null && done >= N / 2) {
        firedAtKill = done
        serviceTicks += processTicks(pid0) - ticks0
        const share = cpu()
        pgPctSeconds += share.postgres * ((performance.now() - cpuSince) / 1000)
        otherPctSeconds += share.other * ((performance.now() - cpuSince) / 1000)
        progress(`kill -9 with ${done} of ${N} fired`)
        await kill9(server)
        const r0 = performance.now()
        server = await startServer(env)
        servers.push(server)
        restartMs = performance.now() - r0
        progress(`restarted in ${round(restartMs, 0)} ms`)
        cpu = cpuWindow(server.child.pid)
        cpuSince = performance.now()
      }
      await sleep(100)
    }
    // The killed process's CPU until its kill, plus the running one over its whole life (boot included).
    const share = cpu()
    pgPctSeconds += share.postgres * ((performance.now() - cpuSince) / 1000)
    otherPctSeconds += share.other * ((performance.now() - cpuSince) / 1000)
    serviceTicks += kind === 'kill' && firedAtKill !== null ? processTicks(server.child.pid!) : processTicks(pid0) - ticks0
    const x1 = await xact()
    const windowS = (Date.now() - dueAt) / 1000
    await sleep(1000) // anything still in flight (a doubled firing) lands before the counts

    const rows = (await db.query<{ id: string; first_at: string | null; triggered_at: string | null; records: number; run_count: number }>(
      `select id, snapshot->'context'->'firings'->0->>'at' as first_at, snapshot->'context'->>'lastTriggeredAt' as triggered_at, jsonb_array_length(snapshot->'context'->'firings')::int as records,
              (snapshot->'context'->>'runCount')::int as run_count
         from actor where kind = 'automation' and snapshot->'context'->>'agentId' = $1`, [agentId])).rows
    const effects = new Map((await db.query<{ id: string; n: number }>(`select actor_id as id, count(*)::int as n from effect where kind = 'automation.fire' group by actor_id`)).rows.map((r) => [r.id, r.n]))
    const journal = new Map((await db.query<{ id: string; n: number }>(
      `select actor_id as id, count(*)::int as n from actor_journal where event->>'type' in ('fire.done', 'fire.failed', 'fire.skipped', 'automation.fire.failed') group by actor_id`)).rows.map((r) => [r.id, r.n]))
    const firedRows = rows.filter((r) => r.first_at !== null && r.run_count >= 1)
    const doubled = rows.filter((r) => (effects.get(r.id) ?? 0) > 1 || r.records > 1 || r.run_count > 1 || (journal.get(r.id) ?? 0) > 1).length
    const lost = rows.length - firedRows.length + Math.max(0, N - rows.length)
    const delays = firedRows.map((r) => Date.parse(r.first_at!) - dueAt).sort((a, b) => a - b)
    // Where the wait is: due -> the timer's transition to executing (claim, inbox, commit), then -> the firing's end (the effect and its finish).
    const sorted = (xs: number[]) => xs.sort((a, b) => a - b)
    const toTriggered = sorted(firedRows.map((r) => Date.parse(r.triggered_at!) - dueAt))
    const triggeredToFired = sorted(firedRows.map((r) => Date.parse(r.first_at!) - Date.parse(r.triggered_at!)))
    const stages = {
      dueToExecutingMs: { p50: round(percentile(toTriggered, 50)), p99: round(percentile(toTriggered, 99)) },
      executingToFiredMs: { p50: round(percentile(triggeredToFired, 50)), p99: round(percentile(triggeredToFired, 99)) },
    }
    const last = delays.length ? delays[delays.length - 1]! : NaN
    const failed = (await db.query(`select count(*)::int as n from actor where kind = 'automation' and snapshot->'context'->'firings'->0->>'outcome' <> 'ok'`)).rows[0].n
    if (failed > 0) progress(`warning: ${failed} firings did not end ok`)
    const firings = firedRows.length
    let statementsPerFiring: Record<string, number> | null = null
    if (COUNT_STATEMENTS && kind === 'plain') {
      await sleep(300)
      const s1 = readStatements(dataDir, pid0)
      statementsPerFiring = Object.fromEntries(Object.entries(s1).map(([k, v]) => [k, round((v - (statements0[k] ?? 0)) / Math.max(firings, 1), 3)] as const)
        .filter(([, v]) => v > 0).sort((a, b) => b[1] - a[1]))
    }
    return {
      scenario: kind, automations: N, createSeconds: round(createSeconds, 1), createPerSecond: round(N / createSeconds, 0),
      allFiredAfterDueSeconds: round(last / 1000, 2), firingsPerSecond: round(firings / Math.max(last / 1000, 0.001), 0),
      dueToFiredMs: { min: round(delays[0] ?? NaN), p50: round(percentile(delays, 50)), p99: round(percentile(delays, 99)), max: round(last) },
      fired: firings, doubled, lost, effects: [...effects.values()].reduce((a, b) => a + b, 0),
      stages, restartMs: restartMs === null ? null : round(restartMs, 0), firedAtKill, dueSpreadMs,
      serviceCpuMsPerFiring: round((serviceTicks * 10) / Math.max(firings, 1), 3),
      serviceCpuPctOfOneCore: round((serviceTicks * 10 * 100) / 1000 / windowS, 0),
      postgresCpuPct: round(pgPctSeconds / windowS, 0),
      otherCpuPct: round(otherPctSeconds / windowS, 0),
      transactionsPerFiring: round((x1 - x0) / Math.max(firings, 1), 2),
      statementsPerFiring,
    }
  } finally {
    await db.end()
    for (const s of servers) await stopServer(s).catch(() => {})
    for (const s of servers) killServerHard(s)
    rmSync(dataDir, { recursive: true, force: true })
  }
}

async function main() {
  progress(`raw durable upserts (bench/upsertWorker.ts, MODE=raw, 10 loops, 6 s)`)
  const upserts = await rawUpsertRate()
  progress(`raw upserts: ${round(upserts.opsPerSec, 0)}/s`)
  const results: Result[] = []
  for (const s of SCENARIOS) results.push(await scenario(s))
  const out = process.stdout
  out.write(`\n${N} interval automations (get_agent) of one running agent, all due at one moment; ${cpus().length} cores, Node ${process.version}\n`)
  out.write(`raw durable upserts (10 loops): ${round(upserts.opsPerSec, 0)}/s\n\n`)
  const cols = ['scenario', 'all fired after due', 'firings/s', '/ raw upserts', 'p50 / p99 due->fired', 'p50 / p99 due->executing', 'p50 / p99 executing->fired', 'doubled', 'lost', 'svc CPU/firing', 'svc CPU', 'pg CPU', 'other CPU', 'xacts/firing', 'created/s']
  out.write(`| ${cols.join(' | ')} |\n|${cols.map(() => '---').join('|')}|\n`)
  for (const r of results) {
    const name = r.scenario === 'kill' ? `kill -9 at ${r.firedAtKill ?? '-'} fired, restart ${r.restartMs ?? '-'} ms` : 'plain'
    out.write(`| ${[name, `${r.allFiredAfterDueSeconds} s`, r.firingsPerSecond, round(r.firingsPerSecond / upserts.opsPerSec, 2), `${round(r.dueToFiredMs.p50 / 1000, 2)} / ${round(r.dueToFiredMs.p99 / 1000, 2)} s`, `${round(r.stages.dueToExecutingMs.p50 / 1000, 2)} / ${round(r.stages.dueToExecutingMs.p99 / 1000, 2)} s`, `${r.stages.executingToFiredMs.p50} / ${r.stages.executingToFiredMs.p99} ms`, r.doubled, r.lost, `${r.serviceCpuMsPerFiring} ms`, `${r.serviceCpuPctOfOneCore} %`, `${r.postgresCpuPct} %`, `${r.otherCpuPct} %`, r.transactionsPerFiring, r.createPerSecond].join(' | ')} |\n`)
  }
  for (const r of results) {
    if (!r.statementsPerFiring) continue
    const total = Object.values(r.statementsPerFiring).reduce((a, b) => a + b, 0)
    out.write(`\nstatements per firing (${r.scenario}): ${round(total, 2)}\n`)
    for (const [k, v] of Object.entries(r.statementsPerFiring)) out.write(`  ${String(v).padStart(7)}  ${k}\n`)
  }
  out.write(`${JSON.stringify({ machine: { cores: cpus().length, node: process.version }, rawUpsertsPerSecond: round(upserts.opsPerSec, 1), results })}\n`)
}

main()
  .catch((err) => {
    process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`)
    process.exitCode = 1
  })
  .finally(async () => {
    await dropAllDatabases()
  })

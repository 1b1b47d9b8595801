/**
 * `npm run bench`: side-by-side measurements of the service against bare baselines, with ratios
 * against goals. Prints a table and, last, one JSON line. See docs/benchmarks.md.
 *
 *  1. HTTP: bare Koa `GET /ping` vs authenticated `GET /api/v1/agents/:id` (both servers in child
 *     processes, same autocannon settings, ABBA order).
 *  2. Durable writes: raw pg upserts of a 1 KB JSONB row vs agent start/stop commands over HTTP.
 *  3. Boot: `node src/main.ts` until /api/v1/health is 200, 0 vs 100,000 agents; then heap per
 *     idle agent loaded into the actor runtime's cache.
 *
 * Knobs (environment): BENCH_DURATION (s, default 8), BENCH_WARMUP (s, 2), BENCH_ROUNDS (2),
 * BENCH_CONNECTIONS (10), BENCH_BOOTS (3), BENCH_AGENTS (100000), BENCH_HEAP_N (20000),
 * BENCH_PG_ADMIN_URL (postgres://postgres@127.0.0.1:5432/postgres), BENCH_ONLY (comma-separated subset of
 * idle,http,writes,boot,heap; default all), BENCH_SERVICE_NODE_ARGS (extra node
 * flags for the service under load, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof" or
 * "--import ./bench/experiments/namedStatements.ts").
 */
import { cpus, loadavg, tmpdir, totalmem } from 'node:os'
import { mkdtemp, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { randomBytes, randomUUID } from 'node:crypto'
import autocannon, { type Request, type Result } from 'autocannon'
import pg from 'pg'
import { initialTransition } from 'xstate'
import { agentKind, agentMachine } from '../src/actors/agent/agent.machine.ts'
import { openDatabase } from '../src/adapters/db/orm.ts'
import { createLogger } from '../src/logger.ts'
import {
  ADMIN_URL,
  baseEnv,
  cpuWindow,
  createDatabase,
  dropAllDatabases,
  freePort,
  httpStatus,
  killAllChildrenSync,
  mean,
  median,
  postmasterOf,
  scopePostgres,
  round,
  sleep,
  spawnNode,
  waitFor200,
  type Child,
  type CpuShare,
} from './lib.ts'

const num = (name: string, dflt: number) => (process.env[name] ? Number(process.env[name]) : dflt)
const CONNECTIONS = num('BENCH_CONNECTIONS', 10)
const DURATION_S = num('BENCH_DURATION', 8)
const WARMUP_S = num('BENCH_WARMUP', 2)
const ROUNDS = num('BENCH_ROUNDS', 2)
const BOOTS = num('BENCH_BOOTS', 3)
const SEED_AGENTS = num('BENCH_AGENTS', 100_000)
const HEAP_N = num('BENCH_HEAP_N', 20_000)
/** Extra node flags for the service under load (not for the boot measurements), e.g. --cpu-prof. */
const SERVICE_NODE_ARGS = (process.env.BENCH_SERVICE_NODE_ARGS ?? '').split(' ').filter(Boolean)
const PHASES = new Set((process.env.BENCH_ONLY ?? 'idle,http,writes,boot,heap').split(',').map((p) => p.trim()))
const GOALS = { httpRatio: 0.5, writeRatio: 0.6, bootRatio: 1.2 }

const log = (s: string) => process.stdout.write(`${s}\n`)
const progress = (s: string) => process.stderr.write(`  .. ${s}\n`)

// ---------------------------------------------------------------------------------------------
// Setup

const tag = `bench_${randomBytes(4).toString('hex')}`
const dataDir = await mkdtemp(join(tmpdir(), 'bench-data-'))
const masterKey = randomBytes(32).toString('hex')
const silent = createLogger({ level: 'warn' })
const started: Child[] = []

function serviceEnv(url: string, port: number, logLevel = 'warn'): Record<string, string> {
  return baseEnv({
    DATABASE_URL: url,
    DATA_DIR: dataDir,
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: logLevel,
    WALLET_MASTER_KEY: masterKey,
    RATE_LIMIT_PER_KEY: '100000000',
    RATE_LIMIT_PER_IP: '100000000',
  })
}

async function startService(url: string): Promise<{ child: Child; base: string }> {
  const port = await freePort()
  const child = spawnNode(['src/main.ts'], serviceEnv(url, port), { nodeArgs: SERVICE_NODE_ARGS, group: true })
  started.push(child)
  const base = `http://127.0.0.1:${port}`
  await waitFor200(`${base}/api/v1/health`, child, { everyMs: 20 })
  return { child, base }
}

async function startBare(): Promise<{ child: Child; base: string }> {
  const port = await freePort()
  const child = spawnNode(['bench/bareServer.ts'], baseEnv({ PORT: String(port) }))
  started.push(child)
  const base = `http://127.0.0.1:${port}`
  await waitFor200(`${base}/ping`, child, { everyMs: 20 })
  return { child, base }
}

/** Starts a server for one measurement only, so nothing else of ours runs while it is measured. */
async function withServer<T>(start: () => Promise<{ child: Child; base: string }>, fn: (s: { child: Child; base: string }) => Promise<T>): Promise<T> {
  const server = await start()
  try {
    return await fn(server)
  } finally {
    await server.child.stop()
  }
}

async function migrate(url: string) {
  const db = await openDatabase({ url, poolSize: 2, logger: silent })
  await db.close()
}

async function withClient<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: url })
  await c.connect()
  try {
    return await fn(c)
  } finally {
    await c.end()
  }
}

// ---------------------------------------------------------------------------------------------
// Load

type Run = {
  reqPerSec: number
  ok: number
  non2xx: number
  errors: number
  p50: number
  p99: number
  cpu: CpuShare
}

function summarize(r: Result, cpu: CpuShare): Run {
  return {
    reqPerSec: r['2xx'] / r.duration,
    ok: r['2xx'],
    non2xx: r.non2xx,
    errors: r.errors + r.timeouts,
    p50: r.latency.p50,
    p99: r.latency.p99,
    cpu,
  }
}

/** Warm-up run (discarded), optional reset, then the measured run with a CPU window. */
async function cannon(
  opts: { url: string; headers?: Record<string, string>; perClient?: (i: number) => { method: Request['method']; path: string }[] },
  serverPid: number,
  beforeMeasure?: () => Promise<void>,
): Promise<Run> {
  const make = (duration: number) => {
    let i = 0
    return autocannon({
      url: opts.url,
      connections: CONNECTIONS,
      duration,
      pipelining: 1,
      timeout: 10,
      ...(opts.headers ? { headers: opts.headers } : {}),
      ...(opts.perClient
        ? {
            setupClient: (client) => {
              const reqs = opts.perClient!(i++)
              client.setRequests(reqs.map((r) => ({ ...r, headers: opts.headers ?? {} })))
            },
          }
        : {}),
    })
  }
  if (WARMUP_S > 0) await make(WARMUP_S)
  if (beforeMeasure) await beforeMeasure()
  const end = cpuWindow(serverPid)
  const result = await make(DURATION_S)
  return summarize(result, end())
}

type Stats = { reqPerSec: number; p50: number; p99: number; non2xx: number; errors: number; rounds: Run[] }
function aggregate(runs: Run[]): Stats {
  return {
    reqPerSec: mean(runs.map((r) => r.reqPerSec)),
    p50: mean(runs.map((r) => r.p50)),
    p99: mean(runs.map((r) => r.p99)),
    non2xx: runs.reduce((a, r) => a + r.non2xx, 0),
    errors: runs.reduce((a, r) => a + r.errors, 0),
    rounds: runs,
  }
}

/** ABBA...: round r runs A then B when r is even, B then A when odd. */
async function alternate(rounds: number, a: () => Promise<Run>, b: () => Promise<Run>): Promise<[Run[], Run[]]> {
  const as: Run[] = []
  const bs: Run[] = []
  for (let r = 0; r < rounds; r++) {
    if (r % 2 === 0) {
      as.push(await a())
      bs.push(await b())
    } else {
      bs.push(await b())
      as.push(await a())
    }
  }
  return [as, bs]
}

// ---------------------------------------------------------------------------------------------
// Table

const pad = (s: string | number, w: number) => String(s).padStart(w)
const HEADER = `${'  '.padEnd(40)}${pad('ops/s', 8)}${pad('p50 ms', 8)}${pad('p99 ms', 8)}${pad('non2xx', 7)}${pad('err', 4)}${pad('svc us/op', 10)}${pad('pg us/op', 9)}   cpu% svc/load/pg/other`
/** CPU microseconds per operation from a % of one core and a rate. */
const usPerOp = (pct: number, rate: number) => (rate > 0 ? Math.round((pct * 10_000) / rate) : 0)
/** CPU microseconds per operation summed over server, load generator and Postgres, averaged over rounds. */
function costPerOp(st: Stats): number {
  return mean(st.rounds.map((r) => usPerOp(r.cpu.server + r.cpu.loadgen + r.cpu.postgres, r.reqPerSec)))
}
function row(label: string, r: { reqPerSec: number; p50: number; p99: number; non2xx: number; errors: number; cpu?: CpuShare; rounds?: Run[] }) {
  const cpus = r.cpu ? [r.cpu] : (r.rounds ?? []).map((x) => x.cpu)
  const avg = (f: (c: CpuShare) => number) => (cpus.length ? mean(cpus.map(f)) : 0)
  const cpu = cpus.length
    ? `${pad(usPerOp(avg((c) => c.server), r.reqPerSec), 10)}${pad(usPerOp(avg((c) => c.postgres), r.reqPerSec), 9)}   ${[avg((c) => c.server), avg((c) => c.loadgen), avg((c) => c.postgres), avg((c) => c.other)].map((x) => Math.round(x)).join('/')}`
    : ''
  return `  ${label.padEnd(38)}${pad(Math.round(r.reqPerSec), 8)}${pad(r.p50.toFixed(1), 8)}${pad(r.p99.toFixed(1), 8)}${pad(r.non2xx, 7)}${pad(r.errors, 4)}${cpu}`
}
const verdict = (ok: boolean) => (ok ? 'MET' : 'MISSED')

// ---------------------------------------------------------------------------------------------
// Phases

async function httpPhase(svcUrl: string, apiKey: string, agentIds: string[]) {
  progress(`HTTP: ${ROUNDS} rounds x (bare, authenticated), ${WARMUP_S}+${DURATION_S} s each`)
  const auth = { authorization: `Bearer ${apiKey}` }
  const [bareRuns, authRuns] = await alternate(
    ROUNDS,
    () => withServer(startBare, (bare) => cannon({ url: `${bare.base}/ping` }, bare.child.pid)),
    () =>
      withServer(
        () => startService(svcUrl),
        (svc) =>
          cannon(
            { url: svc.base, headers: auth, perClient: (i) => [{ method: 'GET', path: `/api/v1/agents/${agentIds[i % agentIds.length]}` }] },
            svc.child.pid,
          ),
      ),
  )
  const bareS = aggregate(bareRuns)
  const authS = aggregate(authRuns)
  return { bare: bareS, auth: authS, ratio: authS.reqPerSec / bareS.reqPerSec }
}

async function writesPhase(url: string, apiKey: string, agentIds: string[]) {
  progress(`durable writes: ${ROUNDS} rounds x (raw upsert, start/stop commands), then MikroORM execute`)
  const auth = { authorization: `Bearer ${apiKey}` }
  const reset = (base: string) => async () => {
    await sleep(300) // let requests cut off at the end of the previous run finish
    for (const id of agentIds) {
      const { status } = await httpStatus(`${base}/api/v1/agents/${id}/stop`, auth, 'POST')
      if (status !== 200 && status !== 409) throw new Error(`reset stop of ${id}: HTTP ${status}`)
    }
  }
  const upserts = async (mode: 'raw' | 'orm' | 'runtime'): Promise<Run> => {
    const child = spawnNode(
      ['bench/upsertWorker.ts'],
      baseEnv({ BENCH_DB_URL: url, MODE: mode, CONNECTIONS: String(CONNECTIONS), WARMUP_MS: String(WARMUP_S * 1000), DURATION_MS: String(DURATION_S * 1000) }),
      { stdin: true },
    )
    started.push(child)
    // The worker warms up first; the CPU window covers the measured part only.
    const alive = () => child.proc.exitCode === null && child.proc.signalCode === null
    while (!child.stdout().includes('measuring\n') && alive()) await sleep(5)
    const end = cpuWindow(child.pid)
    while (!child.stdout().includes('"opsPerSec"') && alive()) await sleep(5)
    const cpu = end()
    child.proc.stdin!.end()
    const code = await child.exited
    if (code !== 0) throw new Error(`upsert worker (${mode}) failed:\n${child.stderr().slice(-3000)}`)
    const r = JSON.parse(child.stdout().trim().split('\n').pop()!) as { opsPerSec: number; ops: number; p50Ms: number; p99Ms: number; errors: number }
    return { reqPerSec: r.opsPerSec, ok: r.ops, non2xx: 0, errors: r.errors, p50: r.p50Ms, p99: r.p99Ms, cpu }
  }
  const commands = () =>
    withServer(
      () => startService(url),
      async (svc) => {
        await reset(svc.base)()
        const r = await cannon(
          {
            url: svc.base,
            headers: auth,
            perClient: (i) => {
              const id = agentIds[i % agentIds.length]
              return [
                { method: 'POST', path: `/api/v1/agents/${id}/start` },
                { method: 'POST', path: `/api/v1/agents/${id}/stop` },
              ]
            },
          },
          svc.child.pid,
          reset(svc.base),
        )
        await reset(svc.base)()
        return r
      },
    )
  const [rawRuns, cmdRuns] = await alternate(ROUNDS, () => upserts('raw'), commands)
  const orm = await upserts('orm')
  const runtime = await upserts('runtime')
  const raw = aggregate(rawRuns)
  const cmd = aggregate(cmdRuns)
  const journal = await withClient(url, async (c) => (await c.query<{ n: string }>('select count(*) as n from actor_journal')).rows[0]!.n)
  return { raw, commands: cmd, orm: aggregate([orm]), runtime: aggregate([runtime]), ratio: cmd.reqPerSec / raw.reqPerSec, journalRows: Number(journal) }
}

/** CPU and transaction rate of the service doing nothing (all agents stopped, no timers). */
async function idlePhase(url: string) {
  progress('idle service: 4 s')
  const xacts = () =>
    withClient(url, async (c) => Number((await c.query<{ n: string }>('select xact_commit as n from pg_stat_database where datname = current_database()')).rows[0]!.n))
  return withServer(
    () => startService(url),
    async (svc) => {
      await sleep(1500)
      const x0 = await xacts()
      const end = cpuWindow(svc.child.pid)
      const t0 = performance.now()
      await sleep(4000)
      const cpu = end()
      await sleep(1100) // the statistics collector flushes about once a second
      const x1 = await xacts()
      return { cpu, xactsPerSec: (x1 - x0) / ((performance.now() - t0) / 1000) }
    },
  )
}

/** Inserts `n` stopped agents (agent + actor + journal rows, as agents.create writes them) with SQL. */
async function seedAgents(url: string, n: number) {
  const accountId = randomUUID()
  const [snapshot] = initialTransition(agentMachine, { agentId: '__AGENT_ID__', accountId })
  const persisted = JSON.stringify(agentMachine.getPersistedSnapshot(snapshot))
  const status = agentKind.statusOf(snapshot)
  const t0 = performance.now()
  await withClient(url, async (c) => {
    await c.query(`insert into account (id, name) values ($1, 'bench-boot')`, [accountId])
    await c.query(
      `with a as (
         insert into agent (id, account_id, name, model, skills, wallet_address, wallet_key_encrypted)
         select gen_random_uuid(), $1, 'bench-' || i, 'gpt-4o-mini', array['trading'], '0x' || lpad(to_hex(i), 40, '0'), 'bench-not-a-key'
           from generate_series(1, $2::int) i
         returning id
       ), x as (
         insert into actor (id, kind, account_id, machine_version, status, state_value, snapshot, timers, version)
         select id::text, $3, $1, $4, $5, $6::jsonb, replace($7, '__AGENT_ID__', id::text)::jsonb, '{}'::jsonb, 1 from a
       )
       insert into actor_journal (actor_id, seq, account_id, event, state_value)
       select id::text, 1, $1, '{"type":"xstate.init"}'::jsonb, $6::jsonb from a`,
      [accountId, n, agentKind.kind, agentKind.machineVersion, status, JSON.stringify(snapshot.value), persisted],
    )
  })
  return performance.now() - t0
}

async function bootOnce(url: string): Promise<{ ms: number; inProcessMs: number | null }> {
  const port = await freePort()
  const t0 = performance.now()
  const child = spawnNode(['src/main.ts'], serviceEnv(url, port, 'info'), { group: true })
  started.push(child)
  try {
    const ms = await waitFor200(`http://127.0.0.1:${port}/api/v1/health`, child, { t0, everyMs: 5 })
    const m = /"bootMs":(\d+)/.exec(child.stderr())
    return { ms, inProcessMs: m ? Number(m[1]) : null }
  } finally {
    await child.stop()
  }
}

async function bootPhase(url0: string, urlN: string) {
  progress(`boot: seeding ${SEED_AGENTS} agents`)
  const seedMs = await seedAgents(urlN, SEED_AGENTS)
  for (const u of [url0, urlN]) await withClient(u, (c) => c.query('vacuum analyze'))
  const counts = await withClient(urlN, async (c) => (await c.query<{ n: string }>('select count(*) as n from actor')).rows[0]!.n)
  progress(`boot: ${BOOTS} boots each (after one discarded warm-up boot each)`)
  await bootOnce(url0)
  await bootOnce(urlN)
  const zero: { ms: number; inProcessMs: number | null }[] = []
  const many: { ms: number; inProcessMs: number | null }[] = []
  for (let i = 0; i < BOOTS; i++) {
    zero.push(await bootOnce(url0))
    many.push(await bootOnce(urlN))
  }
  const med = (xs: { ms: number }[]) => median(xs.map((x) => x.ms))
  const medIn = (xs: { inProcessMs: number | null }[]) => median(xs.map((x) => x.inProcessMs ?? NaN))
  return {
    seedMs,
    agents: Number(counts),
    zero: { medianMs: med(zero), inProcessMedianMs: medIn(zero), runs: zero },
    many: { medianMs: med(many), inProcessMedianMs: medIn(many), runs: many },
    ratio: med(many) / med(zero),
  }
}

async function heapPhase(url: string) {
  progress(`heap: loading ${HEAP_N} agents into the runtime cache`)
  const child = spawnNode(['bench/heapWorker.ts'], baseEnv({ BENCH_DB_URL: url, N: String(HEAP_N) }), { nodeArgs: ['--expose-gc'] })
  started.push(child)
  const code = await child.exited
  if (code !== 0) throw new Error(`heap worker failed:\n${child.stderr().slice(-3000)}`)
  return JSON.parse(child.stdout().trim().split('\n').pop()!) as {
    n: number
    heapBeforeMb: number
    heapAfterMb: number
    bytesPerAgent: number
    persistedSnapshotBytes: number
    loadMs: number
    loadsPerSec: number
  }
}

// ---------------------------------------------------------------------------------------------
// Main

async function cleanup() {
  await Promise.allSettled(started.map((c) => c.stop()))
  await dropAllDatabases()
  await rm(dataDir, { recursive: true, force: true })
}

process.on('exit', killAllChildrenSync)
// A closed stdout (e.g. `| head`) must not skip the cleanup.
process.stdout.on('error', () => {})
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.on(sig, () => {
    process.stderr.write(`bench: ${sig}, cleaning up\n`)
    void cleanup().finally(() => process.exit(130))
  })
}

async function main() {
  const t0 = performance.now()
  const pgVersion = await withClient(ADMIN_URL, async (c) => {
    const v = (await c.query<{ v: string }>(`select current_setting('server_version') as v`)).rows[0]!.v
    const sc = (await c.query<{ v: string }>(`select current_setting('synchronous_commit') as v`)).rows[0]!.v
    const pid = (await c.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid
    return { version: v, synchronousCommit: sc, postmaster: postmasterOf(pid) }
  })
  if (pgVersion.postmaster > 1) scopePostgres(pgVersion.postmaster, tag)
  else log('note: the Postgres server is not on this machine (or not visible); the pg CPU column counts every local postgres process')
  const machine = {
    cores: cpus().length,
    cpu: cpus()[0]?.model ?? 'unknown',
    memGb: round(totalmem() / 2 ** 30, 1),
    node: process.version,
    postgres: pgVersion.version,
    synchronousCommit: pgVersion.synchronousCommit,
    loadavg1: round(loadavg()[0] ?? 0, 2),
  }
  const settings = { connections: CONNECTIONS, warmupS: WARMUP_S, durationS: DURATION_S, rounds: ROUNDS, boots: BOOTS, seedAgents: SEED_AGENTS, heapN: HEAP_N }
  log(`machine: ${machine.cores} cores (${machine.cpu}), ${machine.memGb} GB, node ${machine.node}, PostgreSQL ${machine.postgres} (synchronous_commit=${machine.synchronousCommit}), load avg ${machine.loadavg1}`)
  if (machine.loadavg1 > 0.7) log(`WARNING: the machine is already busy (load avg ${machine.loadavg1}); see the "other" CPU column`)
  if (SERVICE_NODE_ARGS.length) log(`NOTE: service run with extra node flags: ${SERVICE_NODE_ARGS.join(' ')}`)
  log(`settings: ${CONNECTIONS} connections, ${WARMUP_S} s warm-up + ${DURATION_S} s measured per run, ${ROUNDS} rounds in ABBA order (figures are means of rounds); boots: median of ${BOOTS}`)

  log('columns: svc = process under test (bare koa / the service / the upsert worker), load = autocannon (this process), pg = backends of the bench databases + the cluster background processes, other = rest of the machine; us/op = CPU microseconds per operation')
  progress('creating and migrating bench databases')
  const svcUrl = await createDatabase(`${tag}_svc`)
  const zeroUrl = await createDatabase(`${tag}_boot0`)
  const manyUrl = await createDatabase(`${tag}_bootn`)
  for (const u of [svcUrl, zeroUrl, manyUrl]) await migrate(u)
  await withClient(svcUrl, (c) => c.query('create table bench_doc (id int primary key, doc jsonb not null)'))

  const admin = spawnNode(['scripts/admin.ts', 'create-account', '--name', 'bench'], serviceEnv(svcUrl, 0))
  started.push(admin)
  if ((await admin.exited) !== 0) throw new Error(`admin create-account failed:\n${admin.stderr()}`)
  const { apiKey } = JSON.parse(admin.stdout().trim()) as { apiKey: string }
  const agentIds = await withServer(
    () => startService(svcUrl),
    async (svc) => {
      const ids: string[] = []
      for (let i = 0; i < CONNECTIONS; i++) {
        const res = await fetch(`${svc.base}/api/v1/agents`, {
          method: 'POST',
          headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
          body: JSON.stringify({ name: `bench-${i}`, model: 'gpt-4o-mini', skills: ['trading'] }),
        })
        if (res.status !== 201) throw new Error(`create agent: HTTP ${res.status} ${await res.text()}`)
        ids.push(((await res.json()) as { id: string }).id)
      }
      return ids
    },
  )
  const ifSelected = <T,>(name: string, fn: () => Promise<T>): Promise<T | undefined> => (PHASES.has(name) ? fn() : Promise.resolve(undefined))
  const idle = await ifSelected('idle', () => idlePhase(svcUrl))
  const http = await ifSelected('http', () => httpPhase(svcUrl, apiKey, agentIds))
  const writes = await ifSelected('writes', () => writesPhase(svcUrl, apiKey, agentIds))
  const boot = await ifSelected('boot', () => bootPhase(zeroUrl, manyUrl))
  const heap = await ifSelected('heap', () => heapPhase(manyUrl))
  if (PHASES.size < 5) log(`NOTE: BENCH_ONLY=${[...PHASES].join(',')}: the other phases were not run`)

  // -- report
  let httpOk: boolean | undefined
  let httpCost: { bare: number; auth: number } | undefined
  if (http) {
    log('')
    log(`1. HTTP (${CONNECTIONS} connections)`)
    log(HEADER)
    http.bare.rounds.forEach((r, i) => log(row(`bare koa GET /ping           round ${i + 1}`, r)))
    http.auth.rounds.forEach((r, i) => log(row(`auth GET /api/v1/agents/:id  round ${i + 1}`, r)))
    log(row('bare koa GET /ping           mean', http.bare))
    log(row('auth GET /api/v1/agents/:id  mean', http.auth))
    httpOk = http.ratio >= GOALS.httpRatio && http.auth.non2xx === 0 && http.bare.non2xx === 0
    log(`  ratio authenticated/bare = ${http.ratio.toFixed(2)}  (goal >= ${GOALS.httpRatio}, non-2xx must be 0)  ${verdict(httpOk)}`)
    httpCost = { bare: costPerOp(http.bare), auth: costPerOp(http.auth) }
    log(`  cross-check, CPU per request (svc+load+pg): bare ${Math.round(httpCost.bare)} us, authenticated ${Math.round(httpCost.auth)} us -> cost ratio ${(httpCost.bare / httpCost.auth).toFixed(2)}`)
  }
  let writesOk: boolean | undefined
  let writeCost: { raw: number; commands: number } | undefined
  if (writes) {
    log('')
    log(`2. Durable writes (${CONNECTIONS} connections; commands count only 200s)`)
    log(HEADER)
    writes.raw.rounds.forEach((r, i) => log(row(`raw pg upsert 1 KB jsonb     round ${i + 1}`, r)))
    writes.commands.rounds.forEach((r, i) => log(row(`start/stop over HTTP         round ${i + 1}`, r)))
    log(row('raw pg upsert 1 KB jsonb     mean', writes.raw))
    log(row('start/stop over HTTP         mean', writes.commands))
    log(row('(info) upsert via MikroORM execute', writes.orm))
    log(row('(info) start/stop in-process runtime', writes.runtime))
    writesOk = writes.ratio >= GOALS.writeRatio
    log(`  ratio commands/raw = ${writes.ratio.toFixed(2)}  (goal >= ${GOALS.writeRatio})  ${verdict(writesOk)}`)
    log(`  (info) ratio in-process runtime commands/raw = ${(writes.runtime.reqPerSec / writes.raw.reqPerSec).toFixed(2)}  (the runtime's durable write without HTTP)`)
    writeCost = { raw: costPerOp(writes.raw), commands: costPerOp(writes.commands) }
    log(`  cross-check, CPU per write (svc+load+pg): raw ${Math.round(writeCost.raw)} us, command ${Math.round(writeCost.commands)} us -> cost ratio ${(writeCost.raw / writeCost.commands).toFixed(2)}`)
  }
  let bootOk: boolean | undefined
  log('')
  if (boot) {
    log(`3. Boot, idle cost and memory (boot = spawn until GET /api/v1/health = 200, median of ${BOOTS}; in-process = the service's own bootMs log)`)
    log(`  0 agents                 ${boot.zero.medianMs.toFixed(0).padStart(6)} ms   (runs ${boot.zero.runs.map((r) => r.ms.toFixed(0)).join(', ')}; in-process ${boot.zero.inProcessMedianMs} ms)`)
    log(`  ${boot.agents} agents${' '.repeat(Math.max(1, 17 - String(boot.agents).length))}${boot.many.medianMs.toFixed(0).padStart(6)} ms   (runs ${boot.many.runs.map((r) => r.ms.toFixed(0)).join(', ')}; in-process ${boot.many.inProcessMedianMs} ms)`)
    bootOk = boot.ratio <= GOALS.bootRatio
    log(`  ratio ${boot.agents}/0 = ${boot.ratio.toFixed(2)}  (goal <= ${GOALS.bootRatio})  ${verdict(bootOk)}   [seeding took ${(boot.seedMs / 1000).toFixed(1)} s]`)
    log(`  (info) in-process boot ratio = ${(boot.many.inProcessMedianMs / boot.zero.inProcessMedianMs).toFixed(2)}`)
  }
  if (idle) log(`  (info) idle service, all agents stopped: service ${idle.cpu.server}% CPU, postgres ${idle.cpu.postgres}% CPU, ~${Math.round(idle.xactsPerSec)} transactions/s`)
  if (heap) log(`  heap per idle agent: ${Math.round(heap.bytesPerAgent)} bytes (N = ${heap.n}; heap ${heap.heapBeforeMb.toFixed(1)} -> ${heap.heapAfterMb.toFixed(1)} MB; persisted snapshot ${heap.persistedSnapshotBytes} B of JSON; ${Math.round(heap.loadsPerSec)} loads/s)`)
  log('')
  const totalS = (performance.now() - t0) / 1000
  log(`total ${totalS.toFixed(0)} s`)
  const strip = (s: Stats) => ({
    reqPerSec: round(s.reqPerSec, 1),
    p50Ms: round(s.p50, 2),
    p99Ms: round(s.p99, 2),
    non2xx: s.non2xx,
    errors: s.errors,
    rounds: s.rounds.map((r) => ({ reqPerSec: round(r.reqPerSec, 1), p50Ms: r.p50, p99Ms: r.p99, non2xx: r.non2xx, cpu: r.cpu })),
  })
  log(
    JSON.stringify({
      machine,
      settings,
      http: http && httpCost && { bare: strip(http.bare), auth: strip(http.auth), ratio: round(http.ratio, 3), costRatio: round(httpCost.bare / httpCost.auth, 3), goal: GOALS.httpRatio, met: httpOk },
      writes: writes && writeCost && {
        raw: strip(writes.raw),
        commands: strip(writes.commands),
        ormExecute: strip(writes.orm),
        runtimeInProcess: strip(writes.runtime),
        runtimeRatio: round(writes.runtime.reqPerSec / writes.raw.reqPerSec, 3),
        ratio: round(writes.ratio, 3),
        costRatio: round(writeCost.raw / writeCost.commands, 3),
        goal: GOALS.writeRatio,
        met: writesOk,
      },
      boot: boot && {
        agents: boot.agents,
        zeroMedianMs: round(boot.zero.medianMs, 0),
        manyMedianMs: round(boot.many.medianMs, 0),
        zeroRunsMs: boot.zero.runs.map((r) => round(r.ms, 0)),
        manyRunsMs: boot.many.runs.map((r) => round(r.ms, 0)),
        ratio: round(boot.ratio, 3),
        goal: GOALS.bootRatio,
        met: bootOk,
      },
      idle: idle && { serverCpuPct: idle.cpu.server, postgresCpuPct: idle.cpu.postgres, xactsPerSec: Math.round(idle.xactsPerSec) },
      heap: heap && { n: heap.n, bytesPerAgent: Math.round(heap.bytesPerAgent), persistedSnapshotBytes: heap.persistedSnapshotBytes },
      totalSeconds: round(totalS, 0),
    }),
  )
}

let exitCode = 0
try {
  await main()
} catch (err) {
  process.stderr.write(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`)
  exitCode = 1
} finally {
  await cleanup()
}
process.exit(exitCode)

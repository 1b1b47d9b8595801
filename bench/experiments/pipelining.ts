/**
 * Experiment (issue 19): would a pipelining Postgres client make a durable step cheaper than `pg`?
 * `pg` waits for each statement's ReadyForQuery before it sends the next; postgres.js (the
 * `postgres` package) sends the queries of one `sql.begin(sql => [...])` together. On a scratch
 * database (`bench_pipe_<pid>`, dropped at the end, also on failure or Ctrl-C), side by side:
 *
 * - `txn`: a transaction shaped like a chat turn's creation: a ~300-byte `chat_message` row, then
 *   an actor with a ~2 KB JSONB snapshot and its journal row in one CTE statement. Four ways:
 *   `pg` through the service's `withTransaction` with named statements (begin, insert, insert,
 *   commit: 4 round trips); postgres.js `sql.begin(sql => [insert, insert])` (prepared statements
 *   on, its default: `begin` and `commit` are awaited on their own, the two inserts go together:
 *   3 round trips); postgres.js on a reserved connection with begin, both inserts and commit sent
 *   at once (1 round trip; what full pipelining could buy); and, for comparison, `pg` with the
 *   same writes as one statement (the chat row as one more CTE branch; 1 round trip, no
 *   transaction needed).
 * - `upsert`: one statement, a ~1 KB JSONB upsert of the loop's own row, with `pg` and postgres.js
 *   (1 round trip each): the baseline.
 *
 * postgres.js gets the same SQL text as `pg`, as `sql.unsafe(text, values, { prepare: true })`.
 *
 * Each shape runs at each concurrency (loops, each with its own connection) in ABBA order (ABCD
 * DCBA for `txn`), BENCH_PIPE_OPS operations per run after a warm-up. Per operation: wall
 * p50/p99, this process's CPU (process.cpuUsage), the connections' Postgres backends' CPU
 * (utime+stime from /proc/<pid>/stat of each `pg_backend_pid()`), and the cluster's background
 * processes' CPU (walwriter, checkpointer, autovacuum...; also any other database's on the same
 * server).
 * Prints a table, then one JSON line.
 *
 *   npx node bench/experiments/pipelining.ts   (BENCH_PIPE_OPS=4000, BENCH_PIPE_LOOPS=1,10)
 */
import { randomUUID } from 'node:crypto'
import { readFileSync, readdirSync } from 'node:fs'
import { loadavg } from 'node:os'
import pg from 'pg'
import postgres from 'postgres'
import { withTransaction } from '../../src/adapters/db/transaction.ts'
import { createDatabase, dropAllDatabases, percentile, postmasterOf, round } from '../lib.ts'

const OPS = Number(process.env.BENCH_PIPE_OPS ?? 4000)
const LOOPS = (process.env.BENCH_PIPE_LOOPS ?? '1,10').split(',').map(Number)
const WARMUP = 200

const SCHEMA = `
create table chat_message (
  id uuid primary key, account_id uuid not null, agent_id uuid not null, turn_id uuid not null,
  key text not null, role text not null, content text not null default '', model text, tool_calls jsonb,
  tool_call_id text, created_at timestamptz not null default clock_timestamp(), unique (turn_id, key)
);
create index chat_message_agent_created on chat_message (agent_id, created_at desc, id desc);
create table actor (
  id text primary key, kind text not null, account_id uuid not null, machine_version int not null,
  status text not null, state_value jsonb not null, snapshot jsonb not null, timers jsonb not null default '{}',
  version bigint not null, created_at timestamptz not null default now(), updated_at timestamptz not null default now()
);
create index actor_kind_status on actor (kind, status);
create index actor_account on actor (account_id);
create table actor_journal (
  actor_id text not null, seq bigint not null, account_id uuid not null, event jsonb not null,
  state_value jsonb not null, at timestamptz not null default now(), primary key (actor_id, seq)
);
create table bench_doc (id int primary key, doc jsonb not null);
`
const CHAT_INSERT = `insert into chat_message (id, account_id, agent_id, turn_id, key, role, content)
  values ($1, $2, $3, $4, 'user', 'user', $5) on conflict (turn_id, key) do nothing`
const ACTOR_INSERT = `with ins as (
    insert into actor (id, kind, account_id, machine_version, status, state_value, snapshot, version)
    values ($1, 'chat.turn', $2, 1, 'active', $3::jsonb, $4::jsonb, 1)
    returning id, account_id, version
  )
  insert into actor_journal (actor_id, seq, account_id, event, state_value)
  select id, version, account_id, $5::jsonb, $3::jsonb from ins`
/** The same writes as one statement (the chat row as one more CTE branch): atomic without a transaction. */
const TURN_INSERT = `with ins as (
    insert into actor (id, kind, account_id, machine_version, status, state_value, snapshot, version)
    values ($1, 'chat.turn', $2, 1, 'active', $3::jsonb, $4::jsonb, 1)
    returning id, account_id, version
  ), j as (
    insert into actor_journal (actor_id, seq, account_id, event, state_value)
    select id, version, account_id, $5::jsonb, $3::jsonb from ins
  )
  insert into chat_message (id, account_id, agent_id, turn_id, key, role, content)
  select $6, account_id, $7, $8, 'user', 'user', $9 from ins on conflict (turn_id, key) do nothing`
const UPSERT = 'insert into bench_doc (id, doc) values ($1, $2::jsonb) on conflict (id) do update set doc = excluded.doc'

/** One chat turn's creation: ids and payloads built before the clock starts (the same for every client). */
type Turn = { turnId: string; accountId: string; agentId: string; content: string; stateValue: string; snapshot: string; event: string }
const accountId = randomUUID()
const agentId = randomUUID()
function newTurn(n: number): Turn {
  const turnId = randomUUID()
  const steps = Array.from({ length: 22 }, (_, i) => ({ i, id: randomUUID(), note: `step ${i} of turn ${n}, waiting` }))
  return {
    turnId, accountId, agentId,
    content: `Turn ${n}: look at the last hour of swaps on the pair and tell me whether to rebalance. `.repeat(3).slice(0, 220),
    stateValue: JSON.stringify('awaitingModel'),
    snapshot: JSON.stringify({ status: 'active', value: 'awaitingModel', context: { turnId, agentId, accountId, steps } }),
    event: JSON.stringify({ type: 'chat.turn.start', turnId, message: 'user' }),
  }
}
const doc = (loop: number, n: number) => JSON.stringify({ loop, n, at: Date.now(), filler: 'x'.repeat(900) })

type Clients = { pool: pg.Pool; sql: postgres.Sql }
type Variant = { client: string; roundTrips: number; op: (c: Clients, loop: number, n: number, turn: Turn) => Promise<unknown> }

const TXN: Variant[] = [
  {
    client: 'pg (named statements)', roundTrips: 4,
    op: ({ pool }, _loop, _n, t) =>
      withTransaction(pool, async (db) => {
        await db.query({ name: 'chat.insert', text: CHAT_INSERT, values: [randomUUID(), t.accountId, t.agentId, t.turnId, t.content] })
        await db.query({ name: 'actor.insert', text: ACTOR_INSERT, values: [t.turnId, t.accountId, t.stateValue, t.snapshot, t.event] })
      }),
  },
  {
    client: 'postgres.js sql.begin([...])', roundTrips: 3,
    op: ({ sql }, _loop, _n, t) =>
      sql.begin((tx) => [
        tx.unsafe(CHAT_INSERT, [randomUUID(), t.accountId, t.agentId, t.turnId, t.content], { prepare: true }),
        tx.unsafe(ACTOR_INSERT, [t.turnId, t.accountId, t.stateValue, t.snapshot, t.event], { prepare: true }),
      ]),
  },
  {
    client: 'postgres.js begin..commit at once', roundTrips: 1,
    op: async ({ sql }, _loop, _n, t) => {
      const db = await sql.reserve()
      try {
        const sent = [
          db.unsafe('begin'),
          db.unsafe(CHAT_INSERT, [randomUUID(), t.accountId, t.agentId, t.turnId, t.content], { prepare: true }),
          db.unsafe(ACTOR_INSERT, [t.turnId, t.accountId, t.stateValue, t.snapshot, t.event], { prepare: true }),
          db.unsafe('commit'),
        ]
        const settled = await Promise.allSettled(sent)
        const failed = settled.find((s) => s.status === 'rejected')
        if (failed) throw failed.reason
        // A commit of a transaction that failed answers ROLLBACK, not an error.
        const commit = settled[3] as PromiseFulfilledResult<{ command: string }>
        if (commit.value.command !== 'COMMIT') throw new Error(`transaction ended with ${commit.value.command}`)
      } finally {
        db.release()
      }
    },
  },
  {
    client: 'pg, one statement', roundTrips: 1,
    op: ({ pool }, _loop, _n, t) =>
      pool.query({
        name: 'turn.insert', text: TURN_INSERT,
        values: [t.turnId, t.accountId, t.stateValue, t.snapshot, t.event, randomUUID(), t.agentId, t.turnId, t.content],
      }),
  },
]

const UPSERTS: Variant[] = [
  { client: 'pg (named statement)', roundTrips: 1, op: ({ pool }, loop, n) => pool.query({ name: 'doc.upsert', text: UPSERT, values: [loop, doc(loop, n)] }) },
  { client: 'postgres.js', roundTrips: 1, op: ({ sql }, loop, n) => sql.unsafe(UPSERT, [loop, doc(loop, n)], { prepare: true }) },
]

/** utime + stime of a process in clock ticks (1/100 s); 0 once it is gone. */
function ticks(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return Number(fields[11]) + Number(fields[12])
  } catch {
    return 0
  }
}

/** The cluster's processes that serve no client connection: the postmaster and its background children. */
function backgroundPids(postmaster: number): number[] {
  const pids = [postmaster]
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8')
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) !== postmaster) continue
      const title = readFileSync(`/proc/${d}/cmdline`, 'utf8').replaceAll('\0', ' ')
      if (!/\(\d+\)|\[local\]/.test(title)) pids.push(Number(d))
    } catch {
      // gone
    }
  }
  return pids
}
const sumTicks = (pids: number[]) => new Map(pids.map((p) => [p, ticks(p)]))
const tickDelta = (before: Map<number, number>) => [...before].reduce((s, [p, t0]) => s + Math.max(0, ticks(p) - t0), 0)

/** Runs `ops` operations over `loops` concurrent loops; the wall time of each, in ms. */
async function runLoops(v: Variant, c: Clients, loops: number, ops: number, turns: Turn[]): Promise<number[]> {
  const wall: number[] = []
  let next = 0
  await Promise.all(
    Array.from({ length: loops }, async (_, loop) => {
      while (next < ops) {
        const n = next++
        const t0 = performance.now()
        await v.op(c, loop, n, turns[n]!)
        wall.push(performance.now() - t0)
      }
    }),
  )
  return wall
}

type Run = { wall: number[]; seconds: number; clientUs: number; backendTicks: number; backgroundTicks: number }

async function measure(v: Variant, c: Clients, loops: number, backends: number[], postmaster: number): Promise<Run> {
  await runLoops(v, c, loops, WARMUP, Array.from({ length: WARMUP }, (_, n) => newTurn(n)))
  const turns = Array.from({ length: OPS }, (_, n) => newTurn(n))
  const b0 = sumTicks(backends)
  const g0 = sumTicks(backgroundPids(postmaster))
  const cpu0 = process.cpuUsage()
  const t0 = performance.now()
  const wall = await runLoops(v, c, loops, OPS, turns)
  const seconds = (performance.now() - t0) / 1000
  const cpu = process.cpuUsage(cpu0)
  return { wall, seconds, clientUs: cpu.user + cpu.system, backendTicks: tickDelta(b0), backgroundTicks: tickDelta(g0) }
}

/** Opens `loops` connections in each client and returns their backends' pids. */
async function connect(url: string, loops: number): Promise<{ clients: Clients; backends: number[] }> {
  const pool = new pg.Pool({ connectionString: url, max: loops, idleTimeoutMillis: 0 })
  pool.on('error', () => {}) // a connection ended by the final `drop database ... with (force)`
  const sql = postgres(url, { max: loops, onnotice: () => {} })
  const pgClients = await Promise.all(Array.from({ length: loops }, () => pool.connect()))
  const jsClients = await Promise.all(Array.from({ length: loops }, () => sql.reserve()))
  const backends = [
    ...(await Promise.all(pgClients.map(async (cl) => (await cl.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid))),
    ...(await Promise.all(jsClients.map(async (cl) => (await cl`select pg_backend_pid() as pid`)[0]!.pid as number))),
  ]
  pgClients.forEach((cl) => cl.release())
  jsClients.forEach((cl) => cl.release())
  return { clients: { pool, sql }, backends }
}

type Row = {
  shape: string; loops: number; client: string; roundTrips: number; ops: number; opsPerSec: number; p50Ms: number; p99Ms: number
  clientUsPerOp: number; pgBackendUsPerOp: number; pgBackgroundUsPerOp: number
}

function summarize(shape: string, loops: number, v: Variant, runs: Run[]): Row {
  const wall = runs.flatMap((r) => r.wall).sort((a, b) => a - b)
  const ops = wall.length
  const perOp = (x: number) => round(x / ops, 0)
  return {
    shape, loops, client: v.client, roundTrips: v.roundTrips, ops,
    opsPerSec: round(ops / runs.reduce((s, r) => s + r.seconds, 0), 0),
    p50Ms: round(percentile(wall, 50), 2),
    p99Ms: round(percentile(wall, 99), 2),
    clientUsPerOp: perOp(runs.reduce((s, r) => s + r.clientUs, 0)),
    pgBackendUsPerOp: perOp(runs.reduce((s, r) => s + r.backendTicks, 0) * 10_000),
    pgBackgroundUsPerOp: perOp(runs.reduce((s, r) => s + r.backgroundTicks, 0) * 10_000),
  }
}

/** A, B, ..., then the same backwards: each variant runs twice, once early and once late. */
async function sideBySide(shape: string, variants: Variant[], c: Clients, loops: number, backends: number[], postmaster: number): Promise<Row[]> {
  const runs = new Map<Variant, Run[]>(variants.map((v) => [v, []]))
  for (const v of [...variants, ...[...variants].reverse()]) runs.get(v)!.push(await measure(v, c, loops, backends, postmaster))
  return variants.map((v) => summarize(shape, loops, v, runs.get(v)!))
}

function table(rows: Row[]): string {
  const head = ['shape', 'loops', 'client', 'RTs', 'ops/s', 'p50 ms', 'p99 ms', 'client µs/op', 'pg backends µs/op', 'pg background µs/op']
  const cells = rows.map((r) => [r.shape, r.loops, r.client, r.roundTrips, r.opsPerSec, r.p50Ms, r.p99Ms, r.clientUsPerOp, r.pgBackendUsPerOp, r.pgBackgroundUsPerOp].map(String))
  const widths = head.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)))
  return [head, ...cells].map((r) => r.map((c, i) => (i < 3 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ')).join('\n')
}

process.once('SIGINT', () => void dropAllDatabases().finally(() => process.exit(130)))
process.once('SIGTERM', () => void dropAllDatabases().finally(() => process.exit(143)))

const load1Before = round(loadavg()[0]!, 2)
const url = await createDatabase(`bench_pipe_${process.pid}`)
try {
  const setup = new pg.Client({ connectionString: url })
  await setup.connect()
  await setup.query(SCHEMA)
  await setup.end()
  const rows: Row[] = []
  for (const loops of LOOPS) {
    const { clients, backends } = await connect(url, loops)
    const postmaster = postmasterOf(backends[0]!)
    rows.push(...(await sideBySide('txn', TXN, clients, loops, backends, postmaster)))
    rows.push(...(await sideBySide('upsert', UPSERTS, clients, loops, backends, postmaster)))
    await clients.pool.end()
    await clients.sql.end()
  }
  const load1After = round(loadavg()[0]!, 2)
  process.stdout.write(`${table(rows)}\n(load average ${load1Before} before, ${load1After} after; ${OPS} operations per run, two runs per row)\n`)
  process.stdout.write(`${JSON.stringify({ ops: OPS, warmup: WARMUP, load1Before, load1After, rows })}\n`)
} finally {
  await dropAllDatabases()
}

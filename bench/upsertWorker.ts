/**
 * The durable-write baseline, run as a child process by bench/run.ts: CONNECTIONS loops, each
 * upserting its own row of `bench_doc` (a ~1 KB JSONB document) as fast as the database commits
 * (synchronous_commit left at the server default). MODE=raw uses a pg Pool; MODE=orm sends the
 * same statement through MikroORM's `em.getConnection().execute()` on the service's own ORM setup.
 * MODE=runtime is the other side without HTTP: each loop alternates `agent.start` and
 * `agent.stop` on its own agent through the actor runtime (pool of CONNECTIONS, pollers off),
 * so every operation is one committed transition: snapshot, journal row, timer row.
 * Prints `measuring` when the warm-up is over, then one JSON line { ops, seconds, opsPerSec, p50Ms,
 * p99Ms, errors }, then waits for its stdin to close before disconnecting and exiting.
 */
import { randomUUID } from 'node:crypto'
import pg from 'pg'
import { createActorRuntime } from '../src/actors/runtime/actorRuntime.ts'
import { agentKind } from '../src/actors/agent/agent.machine.ts'
import { openDatabase, type Database } from '../src/adapters/db/orm.ts'
import { createLogger } from '../src/logger.ts'

const url = process.env.BENCH_DB_URL!
const mode = process.env.MODE === 'orm' || process.env.MODE === 'runtime' ? process.env.MODE : 'raw'
const connections = Number(process.env.CONNECTIONS ?? 10)
const warmupMs = Number(process.env.WARMUP_MS ?? 2000)
const durationMs = Number(process.env.DURATION_MS ?? 8000)

// ~1 KB of JSON, varied per write so every commit really changes the row.
const filler = 'x'.repeat(900)
const doc = (conn: number, n: number) => JSON.stringify({ conn, n, at: Date.now(), filler })

let execute: (id: number, json: string) => Promise<unknown>
let close: () => Promise<void>
if (mode === 'raw') {
  const pool = new pg.Pool({ connectionString: url, max: connections })
  const sql = 'insert into bench_doc (id, doc) values ($1, $2::jsonb) on conflict (id) do update set doc = excluded.doc'
  execute = (id, json) => pool.query(sql, [id, json])
  close = () => pool.end()
} else if (mode === 'runtime') {
  const db: Database = await openDatabase({ url, poolSize: connections, logger: createLogger({ level: 'warn' }), migrate: false })
  const commitConcurrency = process.env.ACTOR_COMMIT_CONCURRENCY ? Number(process.env.ACTOR_COMMIT_CONCURRENCY) : undefined
  const runtime = createActorRuntime({ pool: db.pool, kinds: [agentKind], logger: createLogger({ level: 'warn' }), ...(commitConcurrency ? { commitConcurrency } : {}) })
  const accountId = randomUUID()
  const agents = await Promise.all(
    Array.from({ length: connections }, async () => {
      const id = randomUUID()
      await runtime.create('agent', { id, accountId, input: { agentId: id, accountId } })
      return id
    }),
  )
  execute = (id, _json) => {
    const agent = agents[id - 1_000_000]!
    return runtime.get(agent).then((e) => runtime.send(agent, { type: e!.status === 'running' ? 'agent.stop' : 'agent.start' }))
  }
  close = () => db.close()
} else {
  const db: Database = await openDatabase({ url, poolSize: connections, logger: createLogger({ level: 'warn' }), migrate: false })
  const conn = db.orm.em.fork().getConnection()
  const sql = 'insert into bench_doc (id, doc) values (?, ?::jsonb) on conflict (id) do update set doc = excluded.doc'
  execute = (id, json) => conn.execute(sql, [id, json], 'run')
  close = () => db.close()
}

async function phase(ms: number, record: boolean) {
  const latencies: number[] = []
  let errors = 0
  const end = performance.now() + ms
  const t0 = performance.now()
  await Promise.all(
    Array.from({ length: connections }, async (_, conn) => {
      let n = 0
      while (performance.now() < end) {
        const s = performance.now()
        try {
          await execute(1_000_000 + conn, doc(conn, n++))
          if (record) latencies.push(performance.now() - s)
        } catch {
          errors++
        }
      }
    }),
  )
  return { latencies, errors, seconds: (performance.now() - t0) / 1000 }
}

await phase(warmupMs, false)
process.stdout.write('measuring\n')
const { latencies, errors, seconds } = await phase(durationMs, true)
latencies.sort((a, b) => a - b)
const at = (p: number) => latencies[Math.min(latencies.length - 1, Math.max(0, Math.ceil((p / 100) * latencies.length) - 1))] ?? NaN
process.stdout.write(
  `${JSON.stringify({ mode, ops: latencies.length, seconds, opsPerSec: latencies.length / seconds, p50Ms: at(50), p99Ms: at(99), errors })}\n`,
)
// Stay connected until the parent has read the CPU counters (its stdin closes), so the
// Postgres backends serving this worker are still alive to be counted.
process.stdin.resume()
process.stdin.on('end', () => void close().finally(() => process.exit(0)))

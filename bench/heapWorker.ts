/**
 * Heap per idle agent, run by bench/run.ts as `node --expose-gc bench/heapWorker.ts`: opens the
 * seeded database, builds an actor runtime with a cache big enough for all of them (pollers not
 * started), loads N agents with `runtime.get(id)`, and reports the retained heap per agent.
 * Prints one JSON line.
 */
import { openDatabase } from '../src/adapters/db/orm.ts'
import { createLogger } from '../src/logger.ts'
import { createActorRuntime } from '../src/actors/runtime/actorRuntime.ts'
import { agentKind } from '../src/actors/agent/agent.machine.ts'

const gc = (globalThis as { gc?: () => void }).gc
if (!gc) throw new Error('run with --expose-gc')
const url = process.env.BENCH_DB_URL!
const n = Number(process.env.N ?? 20_000)
const concurrency = 10

const logger = createLogger({ level: 'warn' })
const db = await openDatabase({ url, poolSize: concurrency, logger, migrate: false })
const runtime = createActorRuntime({ pool: db.pool, kinds: [agentKind], logger, cacheSize: 10 * n })
const { rows } = await db.pool.query<{ id: string }>(`select id from actor where kind = 'agent' order by id limit $1`, [n + 1])
if (rows.length < n + 1) throw new Error(`need ${n + 1} agents, found ${rows.length}`)
const ids = rows.map((r) => r.id)

// Warm every code path once (pg parsing, resolveState) on an agent outside the measured set.
await runtime.get(ids.pop()!)

async function settle() {
  for (let i = 0; i < 4; i++) {
    gc!()
    await new Promise((r) => setImmediate(r))
  }
  return process.memoryUsage().heapUsed
}

const before = await settle()
const t0 = performance.now()
let next = 0
await Promise.all(
  Array.from({ length: concurrency }, async () => {
    while (next < ids.length) await runtime.get(ids[next++]!)
  }),
)
const loadMs = performance.now() - t0
const after = await settle()
if (runtime.cachedCount() !== n + 1) throw new Error(`expected ${n + 1} cached actors, got ${runtime.cachedCount()}`)
const sample = await runtime.get(ids[0]!)
const persistedBytes = JSON.stringify(agentKind.machine.getPersistedSnapshot(sample!.snapshot)).length
await db.close()
process.stdout.write(
  `${JSON.stringify({ n, heapBeforeMb: before / 2 ** 20, heapAfterMb: after / 2 ** 20, bytesPerAgent: (after - before) / n, persistedSnapshotBytes: persistedBytes, loadMs, loadsPerSec: n / (loadMs / 1000) })}\n`,
)
process.exit(0)

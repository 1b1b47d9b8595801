/**
 * Diagnostic (not part of `npm run bench`): the cost of each statement on the command and read
 * paths, one connection, sequential, so contention does not blur it. For each case it reports
 * wall time, this process's CPU and the serving Postgres backend's CPU per operation, with the
 * pg driver's default unnamed statements and with named (server-side prepared) statements.
 *
 *   node bench/sqlProbe.ts            (BENCH_PROBE_OPS=2000 by default)
 */
import { createHash, randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import type pg from 'pg'
import { openDatabase } from '../src/adapters/db/orm.ts'
import { createLogger } from '../src/logger.ts'
import { createActorRuntime } from '../src/actors/runtime/actorRuntime.ts'
import { agentKind } from '../src/actors/agent/agent.machine.ts'
import { createAgentActors } from '../src/actors/agent/agentActors.ts'
import { createAgentRowCache } from '../src/domain/agents/agentRowCache.ts'
import { createAgent } from '../src/domain/agents/createAgent.ts'
import { getAgent } from '../src/domain/agents/getAgent.ts'
import { startAgent } from '../src/domain/agents/startAgent.ts'
import { stopAgent } from '../src/domain/agents/stopAgent.ts'
import { createAgentsRepository } from '../src/adapters/db/agents.repository.ts'
import { withTransaction } from '../src/adapters/db/transaction.ts'
import { nextTimerDelay } from '../src/actors/runtime/actorStore.ts'
import { createDatabase, dropAllDatabases, round } from './lib.ts'

const OPS = Number(process.env.BENCH_PROBE_OPS ?? 2000)
const logger = createLogger({ level: 'warn' })

function backendTicks(pid: number): number {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const x = f.slice(f.lastIndexOf(')') + 2).split(' ')
    return Number(x[11]) + Number(x[12])
  } catch {
    return NaN
  }
}

/** Routes every query of a pool through named statements (prepared once per connection). */
function namedStatements(pool: pg.Pool): pg.Pool {
  const orig = pool.query.bind(pool) as (...a: unknown[]) => Promise<unknown>
  const named = ((text: unknown, values?: unknown) =>
    typeof text === 'string'
      ? orig({ name: `q_${createHash('sha1').update(text).digest('hex').slice(0, 16)}`, text, values })
      : orig(text, values)) as unknown as pg.Pool['query']
  return new Proxy(pool, { get: (t, k) => (k === 'query' ? named : Reflect.get(t, k)) })
}

async function measure(label: string, backendPid: number, fn: (i: number) => Promise<unknown>) {
  for (let i = 0; i < Math.min(200, OPS); i++) await fn(i) // warm
  const b0 = backendTicks(backendPid)
  const c0 = process.cpuUsage()
  const t0 = performance.now()
  for (let i = 0; i < OPS; i++) await fn(i)
  const wall = performance.now() - t0
  const c = process.cpuUsage(c0)
  const b = backendTicks(backendPid) - b0
  const r = {
    case: label,
    wallUs: round((wall * 1000) / OPS, 0),
    nodeCpuUs: round((c.user + c.system) / OPS, 0),
    pgCpuUs: round((b * 10_000) / OPS, 0),
  }
  process.stdout.write(`${label.padEnd(52)}${String(r.wallUs).padStart(8)} us wall${String(r.nodeCpuUs).padStart(8)} us node cpu${String(r.pgCpuUs).padStart(8)} us pg cpu\n`)
  return r
}

const url = await createDatabase(`bench_probe_${process.pid}`)
try {
  const db = await openDatabase({ url, poolSize: 1, logger })
  const pool = db.pool
  await pool.query('create table bench_doc (id int primary key, doc jsonb not null)')
  const backendPid = (await pool.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid
  const accountId = randomUUID()
  await pool.query(`insert into account (id, name) values ($1, 'probe')`, [accountId])
  // With no timer at all the runtime should sleep until the next regular poll; it re-polls when
  // this is below its poll interval.
  process.stdout.write(`nextTimerDelay() with an empty actor_timer: ${JSON.stringify(await nextTimerDelay(pool))} (undefined expected)\n`)
  const filler = 'x'.repeat(900)
  const upsert = 'insert into bench_doc (id, doc) values ($1, $2::jsonb) on conflict (id) do update set doc = excluded.doc'
  const results = []

  for (const mode of ['unnamed', 'named'] as const) {
    const p = mode === 'named' ? namedStatements(pool) : pool
    const runtime = createActorRuntime({ pool: p, kinds: [agentKind], logger })
    const reads = {
      agents: createAgentsRepository({ pool: p }),
      actors: createAgentActors({ runtime }),
      rows: createAgentRowCache({ ttlMs: 2000 }),
    }
    const agent = await createAgent(
      {
        ...reads,
        withTransaction: (fn) => withTransaction(p, fn),
        createWallet: (id) => ({ address: `0x${id.replaceAll('-', '').padEnd(40, '0')}`, encryptedKey: 'probe' }),
        newId: randomUUID,
      },
      { accountId, name: 'probe', model: 'gpt-4o-mini', skills: ['trading'] },
    )
    results.push(await measure(`[${mode}] raw upsert 1 KB jsonb (commit)`, backendPid, (i) => p.query(upsert, [1, JSON.stringify({ i, filler })])))
    results.push(await measure(`[${mode}] select 1`, backendPid, () => p.query('select 1')))
    results.push(await measure(`[${mode}] agents.get (join select)`, backendPid, () => getAgent(reads, { accountId, agentId: agent.id })))
    results.push(
      await measure(`[${mode}] runtime.send start/stop (commit CTE)`, backendPid, (i) =>
        runtime.send(agent.id, { type: i % 2 === 0 ? 'agent.start' : 'agent.stop' }),
      ),
    )
    results.push(
      await measure(`[${mode}] agents.command start/stop (commit + select)`, backendPid, (i) =>
        (i % 2 === 0 ? startAgent : stopAgent)(reads, { accountId, agentId: agent.id }),
      ),
    )
    // leave the agent stopped
    if ((await runtime.get(agent.id))?.status !== 'stopped') await runtime.send(agent.id, { type: 'agent.stop' })
  }
  process.stdout.write(`${JSON.stringify({ ops: OPS, results })}\n`)
  await db.close()
} finally {
  await dropAllDatabases()
}

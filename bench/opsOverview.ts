/**
 * The operator overview at scale: `GET /api/v1/ops/overview` against a database holding 100,000
 * agents and 1,000,000 journal rows (plus wallet operations with effects, outbox transactions,
 * automations with their firings' effects, model charges and dead letters, all seeded with
 * generate_series as the service writes them),
 * the service as a child process on the embedded chain. Measures the route's latency one request
 * at a time (p50/p99 over BENCH_OPS_REQUESTS after a warm-up) and prints the overview query's
 * plan: the indexes each count reads.
 *
 *   npm run -s bench:ops        (BENCH_OPS_AGENTS: default 100000; BENCH_OPS_JOURNAL: at least, default 1000000;
 *                                BENCH_OPS_REQUESTS: default 1000; BENCH_OPS_KEEP=1 keeps the database to study it)
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomUUID } from 'node:crypto'
import pg from 'pg'
import { initialTransition } from 'xstate'
import { agentKind, agentMachine } from '../src/actors/agent/agent.machine.ts'
import { adminCreateAccount, startServer, stopServer } from '../test/support/server.ts'
import { percentile, round } from './lib.ts'

const AGENTS = Number(process.env.BENCH_OPS_AGENTS ?? 100_000)
const JOURNAL = Number(process.env.BENCH_OPS_JOURNAL ?? 1_000_000)
const REQUESTS = Number(process.env.BENCH_OPS_REQUESTS ?? 1000)
const WALLET_OPS = Math.round(AGENTS / 5)
/** One agent in ten has an automation; each fired ten times (one effect `automation.fire` and two journal rows a firing). */
const AUTOMATIONS = Math.round(AGENTS / 10)
const FIRINGS_EACH = 10
const progress = (m: string) => process.stderr.write(`[ops] ${m}\n`)

/**
 * 100k stopped agents (agent, actor, journal), 20k wallet operations with two effects each and an
 * outbox row, 10k automations with 100k firings (their `automation.fire` effects), charges, dead letters.
 */
async function seed(db: pg.Pool, accountId: string) {
  const [snapshot] = initialTransition(agentMachine, { agentId: '__AGENT_ID__', accountId })
  const persisted = JSON.stringify(agentMachine.getPersistedSnapshot(snapshot))
  await db.query(
    `with a as (
       insert into agent (id, account_id, name, model, skills, wallet_address, wallet_key_encrypted)
       select gen_random_uuid(), $1, 'bench-' || i, 'gpt-4o-mini', array['trading'], '0x' || lpad(to_hex(i), 40, '0'), 'bench-not-a-key'
         from generate_series(1, $2::int) i
       returning id
     ), x as (
       insert into actor (id, kind, account_id, machine_version, status, state_value, snapshot, timers, version, created_at, updated_at)
       select id::text, 'agent', $1, $3, $4, $5::jsonb, replace($6, '__AGENT_ID__', id::text)::jsonb, '{}'::jsonb, 1,
              now() - random() * interval '30 days', now() from a
     )
     insert into actor_journal (actor_id, seq, account_id, event, state_value)
     select id::text, 1, $1, '{"type":"xstate.init"}'::jsonb, $5::jsonb from a`,
    [accountId, AGENTS, agentKind.machineVersion, agentKind.statusOf(snapshot), JSON.stringify(snapshot.value), persisted],
  )
  // Wallet operations: most confirmed long ago, some in the last hour, 1 % failed; two effects each.
  await db.query(
    `with o as (
       insert into actor (id, kind, account_id, machine_version, status, state_value, snapshot, version, created_at, updated_at)
       select gen_random_uuid()::text, 'walletop', $1, 1, s, to_jsonb(s), jsonb_build_object('value', s, 'context', '{}'::jsonb), 3, t, t
         from (select case when i % 100 = 0 then 'failed' else 'confirmed' end s,
                      case when i % 20 = 0 then now() - random() * interval '1 hour' else now() - random() * interval '30 days' end t
                 from generate_series(1, $2::int) i) g
       returning id, status, created_at
     ), e as (
       insert into effect (id, actor_id, account_id, kind, params, status, attempts, created_at, updated_at)
       select o.id || ':' || k, o.id, $1, 'op.' || k, '{}'::jsonb, case when o.status = 'failed' and k = 'confirm' then 'failed' else 'done' end,
              case when o.status = 'failed' then 8 else 1 end, o.created_at, o.created_at
         from o, unnest(array['submit', 'confirm']) k
     )
     insert into chain_tx (id, request_id, account_id, kind, chain_id, from_address, nonce, raw, hash, max_fee_per_gas, max_priority_fee_per_gas, status, created_at)
     select o.id, o.id || ':submit', $1, 'swap', 31337, '0x' || lpad('1', 40, '0'), row_number() over (), '0x', '0x' || md5(o.id) || md5(o.id || 'x'), 1, 1, 'confirmed', o.created_at
       from o`,
    [accountId, WALLET_OPS],
  )
  // Automations of one agent in ten (1 % in `error`), each with FIRINGS_EACH firings: as wallet
  // operations, 5 % of the firings in the last hour, the rest over 30 days; 1 % of the firings
  // failed. A firing is an effect `automation.fire` (what the overview counts, through the partial
  // index effect_fire_created) and two journal rows (`executing`, back to `armed`).
  await db.query(
    `with g as (
       select a.id as agent_id, row_number() over (order by a.id) as i from agent a order by a.id limit $2::int
     ), o as (
       insert into actor (id, kind, account_id, machine_version, status, state_value, snapshot, version, created_at, updated_at)
       select gen_random_uuid()::text, 'automation', $1, 1, s, v,
              jsonb_build_object('value', v, 'context', jsonb_build_object('agentId', agent_id::text, 'trigger', jsonb_build_object('type', 'interval', 'everySeconds', 3600))),
              1 + 2 * $3::int, now() - interval '30 days', now()
         from (select agent_id, s, case when s = 'armed' then '{"armed":"timed"}'::jsonb else to_jsonb(s) end v
                 from (select agent_id, case when i % 100 = 0 then 'error' else 'armed' end s from g) y) x
       returning id
     ), f as (
       insert into effect (id, actor_id, account_id, kind, params, status, attempts, created_at, updated_at)
       select o.id || ':fire:' || n, o.id, $1, 'automation.fire', jsonb_build_object('number', n, 'source', jsonb_build_object('source', 'timer')),
              case when abs(hashtext(o.id || n || 'failed')) % 100 = 0 then 'failed' else 'done' end, 1, t, t
         from o, generate_series(1, $3::int) n,
              lateral (select now() - random() * case when abs(hashtext(o.id || n)) % 20 = 0 then interval '1 hour' else interval '30 days' end t) c
       returning actor_id, created_at, params
     )
     insert into actor_journal (actor_id, seq, account_id, event, state_value, at)
     select f.actor_id, 2 * (f.params->>'number')::int + k, $1, jsonb_build_object('type', case when k = 0 then 'xstate.after.due.automation.armed.timed' else 'fire.done' end),
            case when k = 0 then '"executing"'::jsonb else '{"armed":"timed"}'::jsonb end, f.created_at
       from f, generate_series(0, 1) k`,
    [accountId, AUTOMATIONS, FIRINGS_EACH],
  )
  // The rest of the journal: older entries of the agents, up to JOURNAL rows in all.
  const perAgent = Math.max(0, Math.ceil((JOURNAL - AGENTS - 3 * WALLET_OPS - 2 * AUTOMATIONS * FIRINGS_EACH) / AGENTS))
  await db.query(
    `insert into actor_journal (actor_id, seq, account_id, event, state_value, at)
     select a.id, s, $1, '{"type":"agent.tick"}'::jsonb, '"stopped"'::jsonb, now() - random() * interval '30 days'
       from actor a, generate_series(2, $2::int + 1) s where a.kind = 'agent'`,
    [accountId, perAgent],
  )
  await db.query(
    `insert into actor_journal (actor_id, seq, account_id, event, state_value, at)
     select a.id, s, $1, '{"type":"op.step"}'::jsonb, to_jsonb(a.status), a.created_at from actor a, generate_series(1, 3) s where a.kind = 'walletop'`,
    [accountId],
  )
  await db.query(
    `insert into credit_entry (id, account_id, kind, credits, balance_after, ref, created_at)
     select gen_random_uuid(), $1, 'model_usage', -(10 + i % 50), 1000000, 'bench-' || i, now() - random() * interval '2 hours'
       from generate_series(1, 20000) i`,
    [accountId],
  )
  await db.query(
    `insert into actor_inbox (actor_id, account_id, event, processed_at, dead_at, error)
     select id, $1, '{"type":"agent.explode"}'::jsonb, now(), now(), 'bench dead letter' from actor where kind = 'agent' limit 50`,
    [accountId],
  )
  // As autovacuum leaves a table after a bulk load: statistics and the visibility map (index-only scans).
  for (const t of ['agent', 'actor', 'actor_journal', 'effect', 'chain_tx', 'credit_entry', 'actor_inbox', 'account']) await db.query(`vacuum analyze ${t}`)
}

type PlanNode = { 'Node Type': string; 'Relation Name'?: string; 'Index Name'?: string; Plans?: PlanNode[] }

/** Every table read of a plan: `table: how (index)`. */
function planScans(node: PlanNode, out = new Set<string>()): string[] {
  if (node['Relation Name']) out.add(`${node['Relation Name']}: ${node['Node Type']}${node['Index Name'] ? ` (${node['Index Name']})` : ''}`)
  for (const child of node.Plans ?? []) planScans(child, out)
  return [...out]
}

async function measure(url: string, key: string, n: number): Promise<number[]> {
  const ms: number[] = []
  for (let i = 0; i < n; i++) {
    const t0 = performance.now()
    const res = await fetch(`${url}/api/v1/ops/overview`, { headers: { authorization: `Bearer ${key}` } })
    await res.arrayBuffer()
    ms.push(performance.now() - t0)
    if (res.status !== 200) throw new Error(`overview answered ${res.status}`)
  }
  return ms.sort((a, b) => a - b)
}

async function main() {
  const adminUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
  const dbName = `bench_ops_${Date.now()}`
  const admin = new pg.Client({ connectionString: adminUrl })
  await admin.connect()
  await admin.query(`create database ${dbName}`)
  const url = new URL(adminUrl)
  url.pathname = `/${dbName}`
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-ops-'))
  const env = { DATABASE_URL: url.toString(), DATA_DIR: dataDir, LOG_LEVEL: 'warn', RATE_LIMIT_PER_KEY: '100000000', RATE_LIMIT_PER_IP: '100000000' }
  const server = await startServer(env)
  const db = new pg.Pool({ connectionString: url.toString(), max: 2 })
  try {
    const { apiKey } = await adminCreateAccount(env, ['--operator'])
    const accountId = randomUUID()
    await db.query(`insert into account (id, name) values ($1, 'bench-ops')`, [accountId])
    const t0 = performance.now()
    progress(`seeding ${AGENTS} agents, ${WALLET_OPS} wallet operations, ${AUTOMATIONS} automations with ${AUTOMATIONS * FIRINGS_EACH} firings, ${JOURNAL} journal rows`)
    await seed(db, accountId)
    const counts = (await db.query(`select (select count(*) from agent)::int agents, (select count(*) from actor_journal)::int journal, (select count(*) from effect)::int effects,
      (select count(*) from effect where kind = 'automation.fire')::int firings, (select count(*) from effect where kind = 'automation.fire' and created_at > now() - interval '1 hour')::int firings_last_hour`)).rows[0]
    progress(`seeded in ${round((performance.now() - t0) / 1000, 1)} s: ${JSON.stringify(counts)}`)
    await measure(server.url, apiKey, 50)
    const ms = await measure(server.url, apiKey, REQUESTS)
    // The statement alone, from a client of its own: what the database spends, without HTTP and the service's event loop.
    const sql: number[] = []
    for (let i = 0; i < REQUESTS; i++) {
      const s0 = performance.now()
      await db.query(OVERVIEW_SQL)
      sql.push(performance.now() - s0)
    }
    sql.sort((a, b) => a - b)
    const plan = (await db.query(`explain (analyze, format json) ${OVERVIEW_SQL}`)).rows[0]['QUERY PLAN'][0]
    const scans = planScans(plan.Plan)
    console.log(JSON.stringify({
      bench: 'ops-overview', ...counts, requests: REQUESTS,
      p50Ms: round(percentile(ms, 50), 2), p99Ms: round(percentile(ms, 99), 2), maxMs: round(ms.at(-1)!, 2),
      sqlP50Ms: round(percentile(sql, 50), 2), sqlP99Ms: round(percentile(sql, 99), 2), load1: round(loadavg()[0]!, 1), scans,
    }))
  } finally {
    await db.end()
    await stopServer(server)
    if (process.env.BENCH_OPS_KEEP) progress(`kept database ${dbName}`)
    else await admin.query(`drop database if exists ${dbName} with (force)`)
    await admin.end()
    rmSync(dataDir, { recursive: true, force: true })
  }
}

/**
 * The overview's two statements as one, so its plan shows every count: the runtime's
 * (`countsStatement` of src/actors/runtime/inspectCounts.store.ts, with the work the ops use case counts
 * by its effects) and the service's (src/adapters/db/opsOverview.store.ts, read from its module),
 * the queries the route runs side by side.
 */
const OVERVIEW_SQL = await (async () => {
  const { readFileSync } = await import('node:fs')
  const { countsStatement } = await import('../src/actors/runtime/inspectCounts.store.ts')
  const { EFFECT_WORK } = await import('../src/domain/ops/opsOverview.ts')
  const src = readFileSync(new URL('../src/adapters/db/opsOverview.store.ts', import.meta.url), 'utf8')
  const service = /text: `([\s\S]*?)`/.exec(src)![1]!
  return `select * from (${countsStatement(EFFECT_WORK)}) runtime, (${service}) service`
})()

await main()

import { readFileSync } from 'node:fs'
import pg from 'pg'
import { afterAll, describe, expect, it } from 'vitest'
import { acquireNodeLock } from '../src/adapters/db/nodeLock.ts'
import { openDatabase } from '../src/adapters/db/orm.ts'
import { migrations } from '../src/adapters/db/migrations/index.ts'
import { createAutomationsStore, spentBudgetRefusal, tellAgentAutomations } from '../src/adapters/db/automations.store.ts'
import { createLogger } from '../src/logger.ts'
import { actorsCarrying, actorsInStates, firstInStates, pageNaming } from '../src/actors/runtime/read.store.ts'
import { migrateRuntimeSchema, RUNTIME_MIGRATIONS } from '../src/actors/runtime/schema/migrate.ts'
import { actorRowsSql } from '../src/actors/runtime/sqlApi.ts'
import { catalogOf } from './support/catalog.ts'
import { createTestDatabase } from './support/db.ts'
import { RUNTIME_DDL_BEFORE } from './fixtures/runtimeDdlBefore.ts'
import { TRIGGER_MIGRATIONS_BEFORE } from './fixtures/appTriggersBefore.ts'

const json = (name: string) => JSON.parse(readFileSync(new URL(name, import.meta.url), 'utf8')) as string[]
/**
 * The schema the service's migrations made before the runtime owned its tables: generated once,
 * with `catalogOf`, from a database the previous build (commit 63ba1d9) migrated.
 */
const BEFORE = json('./schemaCatalog.before.json')
/**
 * The schema now: `BEFORE` with the runtime's status hooks (their registry, the runtime's two
 * triggers and its dispatcher) in place of the service's triggers on `actor`, and the service's
 * hook functions in place of its trigger functions, and the credits' stripes (a table, a column
 * and functions: Migration20261130010000_credit_stripes), retention (three columns of `actor`
 * and three partial indexes: the runtime's `runtime_0003_retention`), the database's size
 * samples (`database_size_sample`: Migration20261207000000_database_size), and the owners' policies
 * (two tables, an index of wallet_op by account and the trigger that makes their changes
 * account events: Migration20261207120000_owner_policies), and the trace context stored with
 * effects and inbox rows (`effect.trace`, `actor_inbox.trace`: the runtime's `runtime_0004_trace`)
 * and journal entries (`actor_journal.trace`: `runtime_0005_journal_trace`), and the charges
 * folded into the ledger (`credit_pending`, the stripes' `spent`, the ledger's `seq` and the fold's
 * functions: Migration20261207130000_credit_fold), without `actor_run_agent`
 * (Migration20261207140000_run_agent_index).
 * Generated with `catalogOf` from a fresh database; its difference from `BEFORE` is that and
 * nothing else.
 */
const SNAPSHOT = json('./schemaCatalog.snapshot.json')
/** The status hooks registered on a database that ran every migration. */
const HOOKS = [
  'account_event_actor {walletop,launch,run,chatturn,automation,agent} account_event_on_status',
  'account_event_approval {walletop,launch} account_event_on_approval',
  'account_event_low_balance {walletop} account_event_on_low_balance',
  'mirror_leader_swap {walletop} mirror_on_leader_swap',
]

const logger = createLogger({ level: 'silent' })
const drops: Array<() => Promise<void>> = []
afterAll(async () => {
  for (const drop of drops) await drop()
})

async function freshDatabase(): Promise<string> {
  const t = await createTestDatabase()
  drops.push(t.drop)
  return t.url
}

/** The boot path: the runtime's schema, then the service's migrations (openDatabase). Answers the catalog. */
async function boot(url: string): Promise<string[]> {
  const db = await openDatabase({ url, poolSize: 2, logger })
  try {
    const { rows } = await db.pool.query<{ line: string }>(`select name || ' ' || kinds::text || ' ' || fn as line from actor_status_hook order by name`)
    expect(rows.map((r) => r.line)).toEqual(HOOKS)
    return await catalogOf(db.pool)
  } finally {
    await db.close()
  }
}

/**
 * A database as the previous build left it once it had run its migrations up to `last`: each of
 * them in order, its part on the runtime's tables as it then was (the fixture) and the rest as
 * it still is, except the ones that put triggers on `actor`, run whole as they then were (and
 * recorded as run). `before` runs after the migrations, on the database as that build left it.
 */
async function olderBuildDatabase(last: string, before?: (pool: pg.Pool) => Promise<void>): Promise<string> {
  const url = await freshDatabase()
  const db = await openDatabase({ url, poolSize: 2, logger, migrate: false })
  try {
    for (const m of migrations.filter((m) => m.name <= PREVIOUS_LAST)) {
      const ddl = RUNTIME_DDL_BEFORE.find((d) => d.migration === m.name)
      if (ddl) await db.pool.query(ddl.sql)
      const whole = TRIGGER_MIGRATIONS_BEFORE.find((d) => d.migration === m.name)
      if (whole) {
        await db.pool.query(whole.sql)
        await db.pool.query('insert into mikro_orm_migrations (name) values ($1)', [m.name])
      } else await db.orm.migrator.up({ to: m.name })
      if (m.name === last) break
    }
    await before?.(db.pool)
  } finally {
    await db.close()
  }
  return url
}

/** The last migration of the previous build. */
const PREVIOUS_LAST = 'Migration20261129010000_paper_launches'

describe("the runtime's schema", () => {
  it('a fresh database gets exactly the schema of the snapshot (the previous build\'s, the status hooks in place of the triggers on actor)', async () => {
    expect(await boot(await freshDatabase())).toEqual(SNAPSHOT)
  })

  it('the fixture of the previous migrations reproduces the previous schema (so the upgrades below start from real states)', async () => {
    const url = await olderBuildDatabase(PREVIOUS_LAST)
    const c = new pg.Client({ connectionString: url })
    await c.connect()
    try {
      expect(await catalogOf(c)).toEqual(BEFORE)
      expect((await c.query('select to_regclass($1) as t', ['runtime_schema_migration'])).rows[0].t).toBeNull()
    } finally {
      await c.end()
    }
  })

  // Databases an older build migrated, at points where the runtime's tables were each time in
  // another shape: before the actor counts, the shards, the timers' due times and the fence
  // function, between the service's triggers on `actor` (after the first, after the approvals'
  // first version), and after everything. The boot path brings each to the same schema.
  for (const last of ['Migration20261122000001_init', 'Migration20261125100000_market_intel', 'Migration20261125130000_shards', 'Migration20261126170000_ops_timeline', 'Migration20261127190000_webhooks', 'Migration20261127220000_automation_hooks', PREVIOUS_LAST]) {
    it(`a database migrated by the previous build up to ${last} ends in the same schema`, async () => {
      const url = await olderBuildDatabase(last)
      expect(await boot(url)).toEqual(SNAPSHOT)
    })
  }

  it('an upgrade from before the actor counts counts the actors there are, once, and shards them', async () => {
    const insert = `insert into actor (id, kind, account_id, machine_version, status, state_value, snapshot, version)
                    values ($1, $2, '00000000-0000-0000-0000-000000000001', 1, $3, '"x"', '{}', 1)`
    const url = await olderBuildDatabase('Migration20261125100000_market_intel', async (pool) => {
      for (const [id, kind, status] of [['a1', 'agent', 'running'], ['a2', 'agent', 'running'], ['r1', 'run', 'queued']] as const) await pool.query(insert, [id, kind, status])
    })
    await boot(url)
    const db = await openDatabase({ url, poolSize: 2, logger })
    try {
      const counts = await db.pool.query<{ kind: string; status: string; n: number }>('select kind, status, n::int as n from actor_count order by kind')
      expect(counts.rows).toEqual([{ kind: 'agent', status: 'running', n: 2 }, { kind: 'run', status: 'queued', n: 1 }])
      expect((await db.pool.query('select count(*)::int as n from actor_count_delta')).rows[0].n).toBe(0)
      expect((await db.pool.query('select count(*)::int as n from actor where shard is null')).rows[0].n).toBe(0)
      expect((await db.pool.query('select count(*)::int as n from shard_lease')).rows[0].n).toBe(64)
      // Booting again changes nothing: every migration is recorded once.
      expect(await migrateRuntimeSchema(db.pool)).toEqual([])
      expect((await db.pool.query('select name from runtime_schema_migration')).rows.map((r) => r.name)).toEqual(RUNTIME_MIGRATIONS.map((m) => m.name))
    } finally {
      await db.close()
    }
  })

  it('two nodes booting at once: both succeed, each migration is applied once', async () => {
    const url = await freshDatabase()
    const pools = [new pg.Pool({ connectionString: url, max: 2 }), new pg.Pool({ connectionString: url, max: 2 })]
    try {
      const applied = await Promise.all(pools.map((p) => migrateRuntimeSchema(p)))
      expect(applied.flat().sort()).toEqual(RUNTIME_MIGRATIONS.map((m) => m.name).sort())
      const { rows } = await pools[0]!.query<{ name: string }>('select name from runtime_schema_migration')
      expect(rows.map((r) => r.name)).toEqual(RUNTIME_MIGRATIONS.map((m) => m.name))
      expect((await pools[0]!.query('select count(*)::int as n from shard_lease')).rows[0].n).toBe(64)
    } finally {
      await Promise.all(pools.map((p) => p.end()))
    }
  })

  it("boots while the data directory's lock is held (the runtime's migration lock is a number of its own)", async () => {
    const url = await freshDatabase()
    const held = await acquireNodeLock(url, logger)
    try {
      const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error('the boot waited on another lock')), 5000))
      expect(await Promise.race([boot(url), timeout])).toEqual(SNAPSHOT)
    } finally {
      await held.release()
    }
  })
})

/**
 * Actors created and moved through the states the service's hooks (once its triggers) write on:
 * a swap that waits for approval, is approved and confirms leaving the wallet short of gas, a
 * mirror of its agent, a transfer created without approval, a launch moved into approval and
 * out. Answers the account events and inbox rows written, in order (a mirror's `confirmedAt` is
 * the clock's, left out).
 */
async function hookScenario(url: string): Promise<unknown[]> {
  const c = new pg.Client({ connectionString: url })
  await c.connect()
  try {
    const account = '00000000-0000-0000-0000-000000000001'
    const put = (id: string, kind: string, status: string, context: object) =>
      c.query(`insert into actor (id, kind, account_id, machine_version, status, state_value, snapshot, version) values ($1, $2, $3, 1, $4, '"x"', $5, 1)`, [id, kind, account, status, { context }])
    const move = (id: string, status: string, context?: object) =>
      c.query(`update actor set status = $2, version = version + 1, snapshot = coalesce($3, snapshot) where id = $1`, [id, status, context ? { context } : null])
    const swap = { agentId: 'leader', kind: 'swap', approval: { requestedAt: 't' }, params: { tokenIn: '0xa', tokenOut: '0xb', amountIn: '1', tokenInInfo: { native: true, symbol: 'ETH', decimals: 18 } } }
    await put('m1', 'automation', 'armed', { agentId: 'follower', trigger: { type: 'leader_swap', leaderAgentId: 'leader' } })
    await put('w1', 'walletop', 'awaiting_approval', swap)
    await put('w2', 'walletop', 'submitting', { agentId: 'leader', kind: 'transfer' })
    await move('w1', 'submitting')
    await move('w1', 'confirmed', { ...swap, txHash: '0x1', result: { lowBalance: { balanceWei: '1' } } })
    await move('w2', 'failed')
    await put('l1', 'launch', 'pending', { agentId: 'leader', approval: { requestedAt: 't' } })
    await move('l1', 'awaiting_approval')
    await move('l1', 'live')
    await move('m1', 'executing')
    const events = await c.query('select id, type, resource_kind, resource_id, detail, data from account_event order by seq')
    const inbox = await c.query(`select actor_id, event #- '{source,swap,confirmedAt}' as event, dedupe_key from actor_inbox order by seq`)
    return [...events.rows, ...inbox.rows]
  } finally {
    await c.end()
  }
}

describe("the service's writes on an actor's status change (status hooks)", () => {
  it("write what the service's triggers on actor wrote, on a fresh database and on one upgraded from them", async () => {
    const triggers = await hookScenario(await olderBuildDatabase(PREVIOUS_LAST))
    expect(triggers.length).toBeGreaterThanOrEqual(10)
    const fresh = await freshDatabase()
    await boot(fresh)
    expect(await hookScenario(fresh)).toEqual(triggers)
    const upgraded = await olderBuildDatabase(PREVIOUS_LAST)
    await boot(upgraded)
    expect(await hookScenario(upgraded)).toEqual(triggers)
  })
})

describe("the app's indexes on the actor's context, written by the runtime", () => {
  /** A pool whose queries are explained instead of run (sequential scans off): the plans, in order. */
  function explaining(pool: pg.Pool): { db: pg.Pool; plans: string[] } {
    const plans: string[] = []
    const query = async (sql: string, params?: unknown[]) => {
      const { rows } = await pool.query<{ 'QUERY PLAN': string }>(`explain (costs off) ${sql}`, params)
      plans.push(rows.map((r) => r['QUERY PLAN']).join('\n'))
      return { rows: [], rowCount: 0 }
    }
    return { db: { query } as unknown as pg.Pool, plans }
  }

  it("are used by the runtime's reads and the app's statements that read the same context fields", async () => {
    const url = await freshDatabase()
    const db = await openDatabase({ url, poolSize: 2, logger })
    const client = await db.pool.connect()
    try {
      await client.query('set enable_seqscan = off')
      const pool = { query: client.query.bind(client) } as unknown as pg.Pool
      const { db: x, plans } = explaining(pool)
      const account = '00000000-0000-0000-0000-000000000001'
      await pageNaming(x, { kind: 'run', named: { key: 'agentId', value: 'g' }, accountId: account, limit: 20 })
      await firstInStates(x, 'run', ['queued', 'running'], { key: 'agentId', value: 'g' })
      await actorsCarrying(x, { accountId: account, kinds: ['walletop', 'launch'], carrying: ['approval'], orderBy: ['approval', 'requestedAt'], limit: 50 })
      await actorsInStates(x, { states: { walletop: ['confirmed'] }, named: { key: 'agentId', values: ['g'] } })
      await tellAgentAutomations(x, { agentId: 'g', event: { type: 'automation.cancel' }, dedupePrefix: 'p' })
      await createAutomationsStore(x).mirrorEdges()
      await spentBudgetRefusal(x, 'auto1')
      const uses = (plan: string | undefined, index: RegExp) => expect(plan, plan).toMatch(index)
      uses(plans[0], /using actor_(run_agent|named_agent)\b/)
      uses(plans[1], /using actor_run_one_active\b/)
      uses(plans[2], /using actor_approval\b/)
      uses(plans[3], /using actor_named_agent\b/)
      uses(plans[4], /using actor_automation_agent\b/)
      // Every live mirror: a partial index on automations (which one depends on the table's statistics).
      uses(plans[5], /using actor_(automation_agent|automation_status|mirror_leader)\b/)
      uses(plans.slice(6).join('\n'), /using actor_run_automation\b/)
      // An agent's stop reads its run created before the stop's effect: the same index, and that effect by its key.
      const { db: y, plans: before } = explaining(pool)
      await firstInStates(y, 'run', ['queued', 'running'], { key: 'agentId', value: 'g' }, { createdBeforeEffect: 'e' })
      uses(before[0], /using actor_run_one_active\b/)
      uses(before[0], /using effect_pkey\b/)
      // The mirrors of a leader, as the status hook of Migration20261128020000_mirror finds them.
      const mirrors = await client.query<{ 'QUERY PLAN': string }>(`explain (costs off) select m.id from ${actorRowsSql({ kind: 'automation' })} m
         where m.status in ('armed', 'executing')
           and m.context->'trigger'->>'type' = 'leader_swap' and m.context->'trigger'->>'leaderAgentId' = $1`, ['g'])
      uses(mirrors.rows.map((r) => r['QUERY PLAN']).join('\n'), /using actor_mirror_leader\b/)
    } finally {
      client.release()
      await db.close()
    }
  })
})

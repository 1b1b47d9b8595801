import type pg from 'pg'
import { BASELINE_SQL } from './baseline.ts'
import { STATUS_HOOKS_SQL } from './statusHooks.ts'
import { RETENTION_SQL } from './retention.ts'
import { JOURNAL_TRACE_SQL, TRACE_SQL } from './trace.ts'

/** A migration of the runtime's schema: applied once per database, in a transaction, in list order. */
export type RuntimeMigration = { name: string; sql: string }

/**
 * The runtime's migrations, in order. A new one goes at the end under a new name; one applied
 * somewhere is never edited (its name is what a database records). The first is the whole
 * schema as the service's migrations made it before the runtime owned it, idempotent, so it also
 * brings a database an older build migrated to the same shape. The second lets the app write in
 * the statement that changes an actor's status (statusHooks.ts); the third is retention
 * (retention.ts); the fourth stores the trace context with effects and inbox rows, the fifth with
 * journal entries (trace.ts).
 */
export const RUNTIME_MIGRATIONS: readonly RuntimeMigration[] = [
  { name: 'runtime_0001_baseline', sql: BASELINE_SQL },
  { name: 'runtime_0002_status_hooks', sql: STATUS_HOOKS_SQL },
  { name: 'runtime_0003_retention', sql: RETENTION_SQL },
  { name: 'runtime_0004_trace', sql: TRACE_SQL },
  { name: 'runtime_0005_journal_trace', sql: JOURNAL_TRACE_SQL },
]

/**
 * The advisory lock that serialises the runtime's migrations across processes: a fixed number
 * that must be no other lock's. The service holds one of its own numbers for as long as a
 * process runs (7_307_071) and another around its migrations (7_307_072); sharing the first
 * would make a booting node wait for a running one forever.
 */
const RUNTIME_MIGRATION_LOCK_KEY = 7_307_073

/**
 * Applies the runtime's pending migrations to the database `pool` reaches, each in a
 * transaction of its own and recorded in `runtime_schema_migration` by name in that
 * transaction, so a crash between two leaves the first applied and recorded and the second
 * neither. Nodes that start together take turns under an advisory lock: the next one finds
 * nothing left to do. Runs before the service's own migrations, which may refer to the
 * runtime's tables (a status hook, an index on an actor's context). Answers the names
 * applied now. A name recorded by a newer build and unknown here is left alone.
 *
 * @example
 * const applied = await migrateRuntimeSchema(pool) // ['runtime_0001_baseline'] on a fresh database
 */
export async function migrateRuntimeSchema(pool: pg.Pool, migrations: readonly RuntimeMigration[] = RUNTIME_MIGRATIONS): Promise<string[]> {
  const client = await pool.connect()
  const applied: string[] = []
  try {
    await client.query('select pg_advisory_lock($1)', [RUNTIME_MIGRATION_LOCK_KEY])
    await client.query('create table if not exists runtime_schema_migration (name text primary key, applied_at timestamptz not null default now())')
    const { rows } = await client.query<{ name: string }>('select name from runtime_schema_migration')
    const done = new Set(rows.map((r) => r.name))
    for (const m of migrations) {
      if (done.has(m.name)) continue
      await client.query('begin')
      try {
        await client.query(m.sql)
        await client.query('insert into runtime_schema_migration (name) values ($1)', [m.name])
        await client.query('commit')
      } catch (err) {
        await client.query('rollback').catch(() => {})
        throw new Error(`The runtime's schema migration ${m.name} failed: ${err instanceof Error ? err.message : String(err)}`, { cause: err })
      }
      applied.push(m.name)
    }
    return applied
  } finally {
    await client.query('select pg_advisory_unlock($1)', [RUNTIME_MIGRATION_LOCK_KEY]).catch(() => {})
    client.release()
  }
}

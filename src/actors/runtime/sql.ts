import { createHash } from 'node:crypto'
import type pg from 'pg'

/*
 * The SQL vocabulary the runtime shares with the stores that write beside it: a connection or a
 * pool (`Queryable`), a write described rather than run (`SqlWrite`), and a transaction.
 */

/** A pool or a connection: what a statement is sent through. */
export type Queryable = {
  query<R = any>(statement: string | { text: string; values?: unknown[]; name?: string }, values?: unknown[]): Promise<{ rows: R[]; rowCount: number | null }>
}

/**
 * A write described rather than run: the branches of a `WITH` (each named, data-modifying or
 * not), their parameters numbered from $1 as if they stood alone, and no other `$` in them. The
 * store that records an effect's outcome sends it as more branches of its own commit, so a
 * charge, a message and the transition are one statement (`withBranches` composes them; a write
 * run alone goes through `runSqlWrite`). `name` names the prepared statement.
 */
export type SqlWrite = { name: string; with: ReadonlyArray<{ as: string; sql: string }>; values: unknown[] }

/**
 * A condition a write must meet, as SQL: a boolean expression over its own parameters ($1, …)
 * that refuses by raising (a function that raises an error of the caller's own SQLSTATE), so the
 * statement it guards fails whole and writes nothing. `name` names it in the prepared statement.
 */
export type SqlGuard = { name: string; sql: string; values: unknown[] }

/** `sql` with its parameters $1, $2, … renumbered from $`offset + 1`. */
export const shiftParams = (sql: string, offset: number): string => sql.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + offset}`)

/**
 * The `WITH` branches of `writes`, their parameters numbered after the caller's `offset`:
 * `, a as (…), b as (…)` to append to a statement's own branches, and the values to append to
 * its own. Throws when two branches share a name (they would not be one write each).
 *
 * @example
 * const more = withBranches([chatMessageInsert(m)], 14)
 * await db.query({ text: `with ins as (…)${more.text} insert …`, values: [...own, ...more.values] })
 */
export function withBranches(writes: readonly SqlWrite[], offset: number): { text: string; values: unknown[] } {
  const { branches, values } = shiftedBranches(writes, offset)
  return { text: branches.map((b) => `, ${b.as} as (${b.sql})`).join(''), values }
}

/** The branches of `writes` with their parameters numbered after `offset`, and their values: `withBranches` as a list. */
export function shiftedBranches(writes: readonly SqlWrite[], offset: number): { branches: Array<{ as: string; sql: string }>; values: unknown[] } {
  const seen = new Set<string>()
  const branches: Array<{ as: string; sql: string }> = []
  const values: unknown[] = []
  for (const w of writes) {
    for (const b of w.with) {
      if (seen.has(b.as)) throw new Error(`two writes name a WITH branch ${b.as}`)
      seen.add(b.as)
      branches.push({ as: b.as, sql: shiftParams(b.sql, offset + values.length) })
    }
    values.push(...w.values)
  }
  return { branches, values }
}

/** Several writes as one (their branches in order, parameters renumbered), named `name`. */
export function mergeWrites(name: string, writes: readonly SqlWrite[]): SqlWrite {
  const { branches, values } = shiftedBranches(writes, 0)
  return { name, with: branches, values }
}

/** Runs one write as a statement of its own (named: prepared once per connection). */
export async function runSqlWrite(db: Queryable, w: SqlWrite): Promise<void> {
  const [only] = w.with
  const text = w.with.length === 1 ? only!.sql : `with ${w.with.map((b) => `${b.as} as (${b.sql})`).join(', ')} select 1`
  await db.query({ name: preparedName(w.name), text, values: w.values })
}

/**
 * Runs `fn` inside BEGIN/COMMIT on one pooled connection; rolls back and rethrows on any error,
 * and always gives the connection back.
 *
 * @example
 * const next = await withTransaction(pool, async (db) => {
 *   const { rows } = await db.query('select next_nonce from wallet_nonce where address = $1 for update', [from])
 *   return rows[0]
 * })
 */
export async function withTransaction<T>(pool: pg.Pool, fn: (db: pg.PoolClient) => Promise<T>): Promise<T> {
  const db = await pool.connect()
  try {
    await db.query('begin')
    const out = await fn(db)
    await db.query('commit')
    return out
  } catch (err) {
    await db.query('rollback').catch(() => {})
    throw err
  } finally {
    db.release()
  }
}

/** Postgres keeps the first 63 bytes of an identifier, a prepared statement's name included. */
const MAX_NAME = 63

/**
 * A prepared statement's name as Postgres will keep it: `name` itself when it fits in 63 bytes,
 * else its first 54 characters, `~` and 8 hex digits of its hash. Names composed of a write's
 * parts (`actor.commit+actor.insert+…`) grow past the limit, and Postgres would cut them
 * silently: two statements whose names share their first 63 bytes would then collide on one
 * connection ("prepared statement already exists").
 */
export function preparedName(name: string): string {
  if (Buffer.byteLength(name) <= MAX_NAME) return name
  return `${name.slice(0, 54)}~${createHash('sha1').update(name).digest('hex').slice(0, 8)}`
}

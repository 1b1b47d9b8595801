import type { Queryable, SqlWrite } from '../../domain/billing/ports.ts'

export type { SqlWrite }

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
  const seen = new Set<string>()
  let text = ''
  const values: unknown[] = []
  for (const w of writes) {
    for (const b of w.with) {
      if (seen.has(b.as)) throw new Error(`two writes name a WITH branch ${b.as}`)
      seen.add(b.as)
      text += `, ${b.as} as (${shiftParams(b.sql, offset + values.length)})`
    }
    values.push(...w.values)
  }
  return { text, values }
}

/** Runs one write as a statement of its own (named: prepared once per connection). */
export async function runSqlWrite(db: Queryable, w: SqlWrite): Promise<void> {
  const [only] = w.with
  const text = w.with.length === 1 ? only!.sql : `with ${w.with.map((b) => `${b.as} as (${b.sql})`).join(', ')} select 1`
  await db.query({ name: w.name, text, values: w.values })
}

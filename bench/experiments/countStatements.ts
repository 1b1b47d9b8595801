/**
 * Diagnostic, not a fix: preloaded into the service (`NODE_OPTIONS="--import <repo>/bench/experiments/countStatements.ts"`
 * with STATEMENT_COUNT_DIR set, as bench/automations.ts does with BENCH_STATEMENT_COUNTS=1) it
 * counts every statement the process sends through either copy of `pg` (the app's and
 * @mikro-orm/postgresql's), keyed by the prepared statement's name or the first words of its
 * text, and writes the cumulative counts to STATEMENT_COUNT_DIR/stmts-<pid>.json every 250 ms.
 */
import { writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join, resolve } from 'node:path'
import pg from 'pg'

const dir = process.env.STATEMENT_COUNT_DIR
if (dir) {
  const counts = new Map<string, number>()
  const keyOf = (q: unknown): string => {
    const o = (typeof q === 'object' && q ? q : { text: q }) as { name?: string; text?: unknown }
    const text = typeof o.text === 'string' ? o.text.replace(/\s+/g, ' ').trim().slice(0, 90) : String(o.text)
    return o.name ? `[${o.name}] ${text.slice(0, 50)}` : text
  }
  const mikroPg = createRequire(resolve('node_modules/@mikro-orm/postgresql/package.json'))('pg') as typeof pg
  for (const lib of new Set([pg, mikroPg])) {
    const original = lib.Client.prototype.query as (...args: unknown[]) => unknown
    ;(lib.Client.prototype as { query: unknown }).query = function (this: unknown, ...args: unknown[]) {
      const k = keyOf(args[0])
      counts.set(k, (counts.get(k) ?? 0) + 1)
      return original.apply(this, args)
    }
  }
  const file = join(dir, `stmts-${process.pid}.json`)
  setInterval(() => writeFileSync(file, JSON.stringify(Object.fromEntries(counts))), 250).unref()
}

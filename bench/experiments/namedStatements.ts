/**
 * Experiment, not a fix: preloaded into the service (`node --import ./bench/experiments/namedStatements.ts
 * src/main.ts`, or BENCH_SERVICE_NODE_ARGS for bench/run.ts) it turns every parameterised pg query
 * into a named statement, so Postgres parses and plans it once per connection instead of on every
 * call. It patches both copies of `pg` in node_modules (the app's and @mikro-orm/postgresql's,
 * whose Pool the service uses). MikroORM's own queries inline their parameters, so they are left
 * alone. Used to measure what prepared statements would buy on the hot paths.
 */
import { createHash } from 'node:crypto'
import { createRequire } from 'node:module'
import { resolve } from 'node:path'
import pg from 'pg'

const mikroPg = createRequire(resolve('node_modules/@mikro-orm/postgresql/package.json'))('pg') as typeof pg
for (const lib of new Set([pg, mikroPg])) {
  const original = lib.Client.prototype.query as (...args: unknown[]) => unknown
  ;(lib.Client.prototype as { query: unknown }).query = function (this: unknown, text: unknown, values?: unknown, cb?: unknown) {
    if (typeof text === 'string' && Array.isArray(values) && values.length > 0 && text.includes('$1')) {
      const name = `q_${createHash('sha1').update(text).digest('hex').slice(0, 16)}`
      return original.call(this, { name, text, values }, cb)
    }
    return original.call(this, text, values, cb)
  }
}

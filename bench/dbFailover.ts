/**
 * The database's failover: the replicated pair of scripts/dbpair.sh (pg_auto_failover, a monitor,
 * a primary and a synchronous standby) under the service's own pool (src/adapters/db/orm.ts,
 * which follows the primary), with WRITERS concurrent writers each inserting keyed rows; then
 * kill -9 of the primary's pg_autoctl and Postgres (the loss of its machine). A writer whose
 * write failed retries it with the same key (an insert that does nothing when the key is there:
 * what an Idempotency-Key does for a request). Printed: the time from the kill to the first
 * write committed on the new primary (`writesAgainMs`), to the first success of a retry of a
 * write the kill cut off (`firstRetryOkMs`), the acknowledged writes missing afterwards
 * (`acknowledgedLost`, goal 0), keys stored twice (`doubled`, goal 0), writes that failed with
 * an error that does not say "retry" (`failedWithoutRetryable`, goal 0), and the cut-off writes
 * whose retry found them already committed (`inDoubt`: committed, unacknowledged; the key is
 * what keeps them from being doubled).
 *
 * It measures the database layer, not yet the full scenario of three service nodes with
 * keyed swaps, a DCA automation and chat turns in flight.
 *
 * npm run -s bench:dbfailover        (needs pg_autoctl: apt-get install postgresql-15-auto-failover)
 */
import { execFile } from 'node:child_process'
import { chmodSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { openDatabase } from '../src/adapters/db/orm.ts'
import { isDatabaseUnavailable } from '../src/adapters/db/primaryHosts.ts'
import { createLogger } from '../src/logger.ts'
import { sleep } from './lib.ts'

const run = promisify(execFile)
const WRITERS = Number(process.env.WRITERS ?? 8)

const dir = mkdtempSync(join(tmpdir(), 'dbfailover-'))
chmodSync(dir, 0o755)
const env = { ...process.env, DBPAIR_DIR: join(dir, 'pair'), DBPAIR_PORT: '36000' }
const pair = (...args: string[]) => run('bash', ['scripts/dbpair.sh', ...args], { env, timeout: 180_000 })

try {
  const { stdout } = await pair('start')
  const url = /^DATABASE_URL=(.+)$/m.exec(stdout)![1]!
  const db = await openDatabase({ url, poolSize: WRITERS, logger: createLogger({ level: 'silent' }), migrate: false })
  await db.pool.query('create table keyed (k text not null, at timestamptz not null default clock_timestamp())')

  const acknowledged: string[] = []
  let killedAt = Infinity
  /** When the crash command returned: a write started after it cannot have gone to the old primary. */
  let crashedAt = Infinity
  let writesAgainAt = Infinity
  let firstRetryOkAt = Infinity
  let failedWithoutRetryable = 0
  let inDoubt = 0
  let stop = false
  const writer = async (w: number) => {
    for (let i = 0; !stop; i++) {
      const k = `${w}:${i}`
      for (let attempt = 0; ; attempt++) {
        const startedAt = performance.now()
        try {
          const r = await db.pool.query('insert into keyed (k) select $1 where not exists (select 1 from keyed where k = $1)', [k])
          const now = performance.now()
          if (startedAt > crashedAt) writesAgainAt = Math.min(writesAgainAt, now)
          if (attempt > 0 && now > killedAt) firstRetryOkAt = Math.min(firstRetryOkAt, now)
          if (attempt > 0 && r.rowCount === 0) inDoubt++
          acknowledged.push(k)
          break
        } catch (err) {
          if (!isDatabaseUnavailable(err)) failedWithoutRetryable++
          await sleep(200)
        }
      }
    }
  }
  const writers = Array.from({ length: WRITERS }, (_, w) => writer(w))
  while (acknowledged.length < 500) await sleep(50)
  const { stdout: primary } = await pair('primary')
  killedAt = performance.now()
  await pair('crash', primary.trim())
  crashedAt = performance.now()
  while (writesAgainAt === Infinity || acknowledged.length < 1_000) await sleep(100)
  stop = true
  await Promise.all(writers)
  const stored = new Map<string, number>()
  for (const { k, n } of (await db.pool.query<{ k: string; n: number }>('select k, count(*)::int as n from keyed group by k')).rows) stored.set(k, n)
  await db.close()
  const result = {
    writesAgainMs: Math.round(writesAgainAt - killedAt),
    firstRetryOkMs: Math.round(firstRetryOkAt - killedAt),
    acknowledgedLost: acknowledged.filter((k) => !stored.has(k)).length,
    doubled: [...stored.values()].filter((n) => n > 1).length,
    failedWithoutRetryable,
    inDoubt,
  }
  console.log(`pair: ${primary.trim()} killed; ${acknowledged.length} writes acknowledged by ${WRITERS} writers`)
  console.log(JSON.stringify(result))
} finally {
  await pair('destroy').catch(() => {})
  rmSync(dir, { recursive: true, force: true })
}

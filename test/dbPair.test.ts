import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openDatabase, type Database } from '../src/adapters/db/orm.ts'
import { isDatabaseUnavailable, parseDatabaseUrl, singleHostUrl } from '../src/adapters/db/primaryHosts.ts'
import { createLogger } from '../src/logger.ts'
import { autoctlInstalled, scratchPair } from './support/dbPair.ts'
import { waitFor } from './support/waitFor.ts'

describe('a DATABASE_URL of several hosts', () => {
  it('parses libpq style host lists, and names one host for what takes one', () => {
    const t = parseDatabaseUrl('postgres://u%40x:p%3Aw@10.0.0.1:5433,db2,[::1]:6000/app?target_session_attrs=read-write&sslmode=disable')
    expect(t.hosts).toEqual([
      { host: '10.0.0.1', port: 5433 },
      { host: 'db2', port: 5432 },
      { host: '::1', port: 6000 },
    ])
    expect({ user: t.user, password: t.password, database: t.database, checkWritable: t.checkWritable }).toEqual({ user: 'u@x', password: 'p:w', database: 'app', checkWritable: true })
    expect(singleHostUrl(t, t.hosts[2]!)).toBe('postgres://u%40x:p%3Aw@[::1]:6000/app?sslmode=disable')
    expect(parseDatabaseUrl('postgres://postgres:postgres@127.0.0.1:5432/app').checkWritable).toBe(false)
    expect(parseDatabaseUrl('postgres://postgres@/app?host=/run/postgresql')).toMatchObject({ checkWritable: false, database: 'app' })
    expect(() => parseDatabaseUrl('postgres://a,/app')).toThrow(/host is missing/)
    expect(() => parseDatabaseUrl('postgres://a,b/app?target_session_attrs=read-only')).toThrow(/read-write/)
    expect(() => parseDatabaseUrl('mysql://a/app')).toThrow()
  })
})

const hasAutoctl = autoctlInstalled('test/dbPair.test.ts')

/**
 * The replicated pair of scripts/dbpair.sh (pg_auto_failover: monitor, primary, synchronous
 * standby), in a directory of this file's own, on ports away from a developer's pair.
 */
describe.skipIf(!hasAutoctl)('the replicated pair', () => {
  const { pair, destroy } = scratchPair('dbpair', 21000, 8000)
  let url: string
  let db: Database

  beforeAll(async () => {
    const { stdout } = await pair('start')
    url = /^DATABASE_URL=(.+)$/m.exec(stdout)![1]!
  }, 150_000)
  afterAll(async () => {
    await db?.close()
    await destroy()
  }, 60_000)

  /** The port of the server that answers `pool`, and whether it is in recovery. */
  const where = async (conn: string) => {
    const c = new pg.Client({ connectionString: conn })
    await c.connect()
    try {
      const { rows } = await c.query<{ port: number; standby: boolean; sync: string }>(
        "select inet_server_port() as port, pg_is_in_recovery() as standby, current_setting('synchronous_standby_names') as sync",
      )
      return rows[0]!
    } finally {
      await c.end()
    }
  }

  it('writes go to the primary, whichever host the URL names first, and every commit waits for the standby', async () => {
    const target = parseDatabaseUrl(url)
    const [a, b] = await Promise.all(target.hosts.map((h) => where(singleHostUrl(target, h))))
    const primary = a!.standby ? b! : a!
    const standby = a!.standby ? a! : b!
    expect([primary.standby, standby.standby]).toEqual([false, true])
    expect(primary.sync).toMatch(/^ANY 1 \(/)
    // The standby first in the list: the service still writes to the primary.
    const isStandby = (h: string) => Number(h.endsWith(`:${standby.port}`))
    const standbyFirst = url.replace(/@([^/]+)\//, (_, hosts: string) => `@${hosts.split(',').sort((x, y) => isStandby(y) - isStandby(x)).join(',')}/`)
    expect(parseDatabaseUrl(standbyFirst).hosts[0]!.port).toBe(standby.port)
    db = await openDatabase({ url: standbyFirst, poolSize: 4, logger: createLogger({ level: 'silent' }), migrate: false })
    const { rows } = await db.pool.query<{ port: number }>('select inet_server_port() as port')
    expect(rows[0]!.port).toBe(primary.port)
    await db.pool.query('create table pair_probe (n int primary key)')
  })

  /** Inserts base, base + 1... through the pool until stopped, recording what was acknowledged and what failed. */
  let writers = 0
  function startWriter() {
    const base = 1_000_000 * ++writers
    const acknowledged: number[] = []
    const errors: unknown[] = []
    let n = 0
    let stop = false
    const done = (async () => {
      while (!stop) {
        const i = n++
        try {
          await db.pool.query('insert into pair_probe values ($1)', [base + i])
          acknowledged.push(base + i)
        } catch (err) {
          errors.push(err)
          await new Promise((r) => setTimeout(r, 50))
        }
      }
    })()
    return { acknowledged, errors, stop: () => ((stop = true), done) }
  }
  const port = async () => (await db.pool.query<{ port: number }>('select inet_server_port() as port').catch(() => undefined))?.rows[0]!.port

  /** Every acknowledged write is stored; what failed in between failed as "no primary answering" (a 503 for a request). */
  async function expectNothingLost(w: ReturnType<typeof startWriter>) {
    expect(w.errors.filter((e) => !isDatabaseUnavailable(e)).map(String)).toEqual([])
    const { rows } = await db.pool.query<{ n: number }>('select n from pair_probe')
    const stored = new Set(rows.map((r) => r.n))
    expect(w.acknowledged.filter((i) => !stored.has(i))).toEqual([])
  }

  it('a switchover: the same pool follows the new primary without reopening; every acknowledged write is there', async () => {
    const before = await port()
    const w = startWriter()
    await waitFor(() => w.acknowledged.length > 20, 10_000)
    await pair('switchover')
    await waitFor(async () => (await port()) !== before, 30_000)
    const after = w.acknowledged.length
    await waitFor(() => w.acknowledged.length > after + 20, 10_000)
    await w.stop()
    await expectNothingLost(w)
  }, 60_000)

  it('kill -9 of the primary (its pg_autoctl and Postgres, as a lost machine): the same pool writes again on the promoted standby, nothing acknowledged lost', async () => {
    const before = await port()
    const { stdout: primary } = await pair('primary')
    const w = startWriter()
    await waitFor(() => w.acknowledged.length > 20, 10_000).catch(async (err: unknown) => {
      const { stdout: state } = await pair('status').catch(() => ({ stdout: '(no state)' }))
      throw new Error(`${String(err)} ${w.acknowledged.length}\n${state}\n${[...new Set(w.errors.map(String))].join('\n')}`)
    })
    await pair('crash', primary.trim())
    // Counted once the old primary is gone: what is acknowledged from here was written on the new one.
    const ackedAtKill = w.acknowledged.length
    // A bound for a hang, not a speed figure (bench:dbfailover measures it).
    await waitFor(() => w.acknowledged.length > ackedAtKill + 5, 45_000).catch(async (err: unknown) => {
      // What the pair and the pool went through, for the report.
      const { stdout: state } = await pair('status').catch(() => ({ stdout: '(no state)' }))
      throw new Error(`${String(err)}\n${state}\n${[...new Set(w.errors.map(String))].join('\n')}`)
    })
    expect(await port()).not.toBe(before)
    await w.stop()
    await expectNothingLost(w)
  }, 75_000)
})

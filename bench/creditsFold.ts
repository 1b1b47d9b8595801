/**
 * One account's charges: folded (the charge spends its hold's stripe, the fold moves it into the
 * account's row once a second) against written to the account's row at every charge (what a charge
 * did before Migration20261207130000_credit_fold: here the same charge followed, in its own
 * transaction, by the fold of its account, which writes the row and holds its lock through the
 * commit). Side by side in one run, rounds alternating so both see the same machine, each for one
 * account and for 100 accounts.
 *
 *   npm run -s bench:credits     (BENCH_CREDITS_SECONDS: each round, default 10; BENCH_CREDITS_ROUNDS:
 *                                 rounds of each mode, default 2; BENCH_CREDITS_WORKERS: model calls
 *                                 in flight, default 32)
 *
 * Each worker loops: hold 40 credits (as a model call does before it calls), then charge 12 in a
 * transaction of its own (as the call's finish does). Prints charges per second and the charge's
 * p50 and p99 per mode, the ratio folded / on the row for one account, and one JSON line.
 */
import { randomUUID } from 'node:crypto'
import { openDatabase } from '../src/adapters/db/orm.ts'
import { createCreditsRepository, startCreditFolder } from '../src/adapters/db/credits.repository.ts'
import { createAccountsRepository } from '../src/adapters/db/accounts.repository.ts'
import { withTransaction } from '../src/adapters/db/transaction.ts'
import { createLogger } from '../src/logger.ts'
import { createDatabase, dropAllDatabases, percentile, round } from './lib.ts'

const SECONDS = Number(process.env.BENCH_CREDITS_SECONDS ?? 10)
const ROUNDS = Number(process.env.BENCH_CREDITS_ROUNDS ?? 2)
const WORKERS = Number(process.env.BENCH_CREDITS_WORKERS ?? 32)

const logger = createLogger({ level: 'warn' })
const url = await createDatabase(`bench_credits_${process.pid}`)
const db = await openDatabase({ url, poolSize: WORKERS + 4, logger })
const credits = createCreditsRepository(db.pool)
const accountsRepo = createAccountsRepository({ em: db.orm.em, pool: db.pool, credits })
const folder = startCreditFolder(db.pool, logger)

type Mode = 'folded' | 'row'
type Result = { mode: Mode; accounts: number; charges: number; seconds: number; perSecond: number; p50Ms: number; p99Ms: number }

async function round1(mode: Mode, accountIds: string[]): Promise<Result> {
  const until = performance.now() + SECONDS * 1000
  const latencies: number[] = []
  const t0 = performance.now()
  await Promise.all(
    Array.from({ length: WORKERS }, async (_, w) => {
      const accountId = accountIds[w % accountIds.length]!
      while (performance.now() < until) {
        const ref = randomUUID()
        const held = await credits.reserve({ accountId, credits: 40, ref })
        const t = performance.now()
        await withTransaction(db.pool, async (tx) => {
          // Before the fold, a charge locked the account's row first, wrote it, and held its lock through the commit.
          if (mode === 'row') await tx.query('select 1 from account where id = $1 for no key update', [accountId])
          await credits.settle(held, { credits: 12, ref, kind: 'model_usage' }, tx)
          if (mode === 'row') await tx.query('select credits_fold($1)', [accountId])
        })
        latencies.push(performance.now() - t)
      }
    }),
  )
  const seconds = (performance.now() - t0) / 1000
  latencies.sort((a, b) => a - b)
  return { mode, accounts: accountIds.length, charges: latencies.length, seconds: round(seconds), perSecond: round(latencies.length / seconds, 1), p50Ms: round(percentile(latencies, 50)), p99Ms: round(percentile(latencies, 99)) }
}

async function accounts(n: number): Promise<string[]> {
  const ids: string[] = []
  for (let i = 0; i < n; i++) ids.push((await accountsRepo.create({ name: `bench ${i}`, isOperator: false, address: null, starterCredits: 100_000_000 })).id)
  return ids
}

try {
  const one = await accounts(1)
  const hundred = await accounts(100)
  const results: Result[] = []
  for (let r = 0; r < ROUNDS; r++) {
    for (const [mode, ids] of [['folded', one], ['row', one], ['folded', hundred], ['row', hundred]] as const) {
      const res = await round1(mode, ids)
      results.push(res)
      console.log(`[credits] round ${r + 1}, ${mode.padEnd(6)} ${String(ids.length).padStart(3)} account(s): ${res.perSecond} charges/s, p50 ${res.p50Ms} ms, p99 ${res.p99Ms} ms`)
    }
  }
  const sum = (mode: Mode, n: number) => {
    const rs = results.filter((x) => x.mode === mode && x.accounts === n)
    const charges = rs.reduce((s, x) => s + x.charges, 0)
    const seconds = rs.reduce((s, x) => s + x.seconds, 0)
    return { perSecond: round(charges / seconds, 1), p99Ms: round(Math.max(...rs.map((x) => x.p99Ms))) }
  }
  const summary = { folded1: sum('folded', 1), row1: sum('row', 1), folded100: sum('folded', 100), row100: sum('row', 100) }
  const ratio = round(summary.folded1.perSecond / summary.row1.perSecond)
  console.log(`[credits] one account: folded ${summary.folded1.perSecond}/s vs on the row ${summary.row1.perSecond}/s (x${ratio}); 100 accounts: ${summary.folded100.perSecond}/s vs ${summary.row100.perSecond}/s`)
  console.log(JSON.stringify({ workers: WORKERS, secondsPerRound: SECONDS, rounds: ROUNDS, ...summary, oneAccountRatio: ratio }))
} finally {
  folder.stop()
  await db.close()
  await dropAllDatabases()
}

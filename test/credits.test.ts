import { execFile, spawn } from 'node:child_process'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type TestApp } from './support/app.ts'
import { withTransaction } from '../src/adapters/db/transaction.ts'
import { grantCredits } from '../src/domain/billing/grantCredits.ts'
import { releaseReservation, reserveCredits, settleReservation } from '../src/domain/billing/creditReservations.ts'
import { InsufficientCreditsError } from '../src/domain/errors.ts'
import { waitFor } from './support/waitFor.ts'

/** A small seeded generator: the same seed draws the same numbers. */
function mulberry32(seed: number) {
  let a = seed
  return () => {
    a = (a + 0x6d2b79f5) | 0
    let t = Math.imul(a ^ (a >>> 15), 1 | a)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const run = promisify(execFile)
let app: TestApp
let dbUrl: string

beforeAll(async () => {
  app = await startTestApp({ STARTER_CREDITS: '1000' })
  dbUrl = app.services.config.databaseUrl!
})
afterAll(() => app.close())

const deps = () => ({ credits: app.services.credits })
async function entries(accountId: string, db: Pick<TestApp['services']['pool'], 'query'> = app.services.pool) {
  const { rows } = await db.query<{ kind: string; credits: string; balance_after: string; ref: string }>(
    'select kind, credits, balance_after, ref from credit_entry where account_id = $1 order by seq',
    [accountId],
  )
  return rows.map((r) => ({ kind: r.kind, credits: Number(r.credits), balanceAfter: Number(r.balance_after), ref: r.ref }))
}
const fold = (accountId: string) => app.services.credits.fold(accountId)
/**
 * The ledger's invariants, folded or not: the account's row holds the sum of the ledger's entries,
 * which form one chain (seq 1, 2, ... each balance after the one before plus its credits, the last
 * the row's balance and `ledger_seq`); its reserved credits are its holds on its own row plus its
 * stripes' escrow; a stripe holds exactly its reservations, has spent exactly its pending charges,
 * and never more than its escrow. Answers the balance (less what is pending) and what is held for
 * calls in flight (the stripes' unused escrow is free), as the API reports them.
 */
async function expectInvariantsInOneSnapshot(accountId: string) {
  // One snapshot for every read: the service's fold may run between two of them.
  const db = await app.services.pool.connect()
  await db.query('begin isolation level repeatable read read only')
  try {
    const { rows } = await db.query<{ credits: string; reserved: string; seq: string; sum: string | null; direct: string; escrow: string; spent: string; pending: string }>(
      `select a.credits, a.credits_reserved as reserved, a.ledger_seq as seq, (select sum(credits) from credit_entry where account_id = a.id) as sum,
              (select coalesce(sum(credits), 0) from credit_reservation where account_id = a.id and stripe is null) as direct,
              (select coalesce(sum(escrow), 0) from credit_stripe where account_id = a.id) as escrow,
              (select coalesce(sum(spent), 0) from credit_stripe where account_id = a.id) as spent,
              (select coalesce(sum(credits), 0) from credit_pending where account_id = a.id) as pending
         from account a where a.id = $1`,
      [accountId],
    )
    const r = rows[0]!
    const [credits, reserved, direct, escrow, spent] = [r.credits, r.reserved, r.direct, r.escrow, r.spent].map(Number) as [number, number, number, number, number]
    expect(credits).toBe(Number(r.sum ?? 0))
    expect(credits).toBeGreaterThanOrEqual(reserved)
    expect(reserved).toBe(direct + escrow)
    expect(Number(r.pending) + spent).toBe(0)
    const { rows: stripes } = await db.query<{ stripe: number; escrow: string; held: string; spent: string; holds: string; pending: string }>(
      `select s.stripe, s.escrow, s.held, s.spent,
              (select coalesce(sum(credits), 0) from credit_reservation r where r.account_id = s.account_id and r.stripe = s.stripe) as holds,
              (select coalesce(-sum(credits), 0) from credit_pending p where p.account_id = s.account_id and p.stripe = s.stripe) as pending
         from credit_stripe s where s.account_id = $1`,
      [accountId],
    )
    let unheld = 0
    for (const s of stripes) {
      expect(Number(s.held)).toBe(Number(s.holds))
      expect(Number(s.spent)).toBe(Number(s.pending))
      expect(Number(s.held) + Number(s.spent)).toBeLessThanOrEqual(Number(s.escrow))
      unheld += Number(s.escrow) - Number(s.held)
    }
    const all = await entries(accountId, db)
    const { rows: seqs } = await db.query<{ seq: string }>('select seq from credit_entry where account_id = $1 order by seq', [accountId])
    expect(seqs.map((e) => Number(e.seq))).toEqual(all.map((_, i) => i + 1))
    all.forEach((e, i) => {
      expect(e.balanceAfter).toBe((i ? all[i - 1]!.balanceAfter : 0) + e.credits)
    })
    expect(all.at(-1)?.balanceAfter ?? 0).toBe(credits)
    expect(Number(r.seq)).toBe(all.length)
    return { credits: credits - spent, reserved: reserved - unheld }
  } finally {
    await db.query('rollback')
    db.release()
  }
}

async function expectBalanceIsLedgerSum(accountId: string) {
  // What the API reports moves with no fold: the balance and the holds in flight are the same before and after one.
  const shown = await expectInvariantsInOneSnapshot(accountId)
  expect(await app.services.credits.balance(accountId)).toEqual(shown)
  return shown
}

describe('credit ledger', () => {
  it('a new account gets the starter grant once, with the account id as ref', async () => {
    const { accountId } = await app.account()
    expect(await entries(accountId)).toEqual([{ kind: 'grant', credits: 1000, balanceAfter: 1000, ref: accountId }])
    expect(await expectBalanceIsLedgerSum(accountId)).toEqual({ credits: 1000, reserved: 0 })
  })

  it("the starter grant is the credits store's entry: one (grant, account id) row, answered again by a repeated append", async () => {
    const { account } = await app.services.core.createAccount({ name: 'grant-once' })
    const [grant] = await entries(account.id)
    expect(grant).toEqual({ kind: 'grant', credits: 1000, balanceAfter: 1000, ref: account.id })
    // The same (kind, ref) through the store writes nothing: the grant was written by that store, once.
    const again = await app.services.credits.append({ accountId: account.id, kind: 'grant', credits: 1000, ref: account.id })
    expect(again.created).toBe(false)
    expect(again.entry).toMatchObject({ kind: 'grant', credits: 1000, balanceAfter: 1000, ref: account.id })
    expect(await entries(account.id)).toEqual([grant])
    expect(await expectBalanceIsLedgerSum(account.id)).toEqual({ credits: 1000, reserved: 0 })
  })

  it('a SIWE first sign-in (find or create by address) grants once, even when racing itself', async () => {
    const address = '0x00000000000000000000000000000000000000a1'
    const accounts = await Promise.all(Array.from({ length: 5 }, () => app.services.core.findOrCreateAccount({ address })))
    expect(new Set(accounts.map((a) => a.id)).size).toBe(1)
    await app.services.core.findOrCreateAccount({ address })
    expect(await entries(accounts[0]!.id)).toEqual([{ kind: 'grant', credits: 1000, balanceAfter: 1000, ref: accounts[0]!.id }])
  })

  it('the admin CLI creates accounts with the grant and grants more credits', async () => {
    const env = { ...process.env, DATABASE_URL: dbUrl, STARTER_CREDITS: '250', LOG_LEVEL: 'warn' }
    const created = JSON.parse((await run(process.execPath, ['scripts/admin.ts', 'create-account', '--name', 'cli'], { env })).stdout)
    expect(await entries(created.accountId)).toEqual([{ kind: 'grant', credits: 250, balanceAfter: 250, ref: created.accountId }])

    const grant = (...extra: string[]) => run(process.execPath, ['scripts/admin.ts', 'grant-credits', '--account', created.accountId, '--credits', '500', ...extra], { env })
    expect(JSON.parse((await grant()).stdout)).toMatchObject({ accountId: created.accountId, credits: 500, balanceAfter: 750, created: true })
    expect(JSON.parse((await grant('--ref', 'promo-1')).stdout)).toMatchObject({ credits: 500, balanceAfter: 1250, ref: 'admin:promo-1', created: true })
    expect(JSON.parse((await grant('--ref', 'promo-1')).stdout)).toMatchObject({ balanceAfter: 1250, created: false })
    expect((await expectBalanceIsLedgerSum(created.accountId)).credits).toBe(1250)
    expect(await entries(created.accountId)).toHaveLength(3)

    const bad = await run(process.execPath, ['scripts/admin.ts', 'grant-credits', '--account', created.accountId, '--credits', '0'], { env }).catch((e) => e)
    expect(bad.code).toBe(2)
    expect(bad.stderr).toMatch(/--credits must be a positive integer/)
    const unknown = await run(process.execPath, ['scripts/admin.ts', 'grant-credits', '--account', '00000000-0000-4000-8000-000000000000', '--credits', '5'], { env }).catch((e) => e)
    expect(unknown.code).toBe(1)
    expect(unknown.stderr).toMatch(/Account not found/)
  })

  it('concurrent reservations never take more than the balance', async () => {
    const { accountId } = await app.account()
    const results = await Promise.allSettled(
      Array.from({ length: 30 }, (_, i) => reserveCredits(deps(), { accountId, credits: 90, ref: `call-${i}` })),
    )
    const won = results.filter((r) => r.status === 'fulfilled')
    const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected')
    expect(won).toHaveLength(11) // 11 x 90 = 990 <= 1000 < 12 x 90
    for (const r of lost) expect(r.reason).toBeInstanceOf(InsufficientCreditsError)
    expect(lost[0]!.reason).toMatchObject({ status: 402, code: 'insufficient_credits' })
    expect(await expectBalanceIsLedgerSum(accountId)).toEqual({ credits: 1000, reserved: 990 })
    // The same ref again is the same hold, not a second one.
    const first = (won[0] as PromiseFulfilledResult<{ id: string; ref: string }>).value
    expect(await reserveCredits(deps(), { accountId, credits: 90, ref: first.ref })).toMatchObject({ id: first.id })
    const { rows } = await app.services.pool.query('select count(*)::int as n from credit_reservation where account_id = $1', [accountId])
    expect(rows[0].n).toBe(11)
  })

  it('settle charges once per ref in the caller transaction, and release gives credits back', async () => {
    const { accountId } = await app.account()
    const r1 = await reserveCredits(deps(), { accountId, credits: 300, ref: 'effect-1' })
    const r2 = await reserveCredits(deps(), { accountId, credits: 300, ref: 'effect-2' })
    // A transaction that rolls back leaves no charge and the reservation in place.
    await withTransaction(app.services.pool, async (tx) => {
      await settleReservation(deps(), r1, { credits: 120, ref: 'effect-1' }, tx)
      throw new Error('event not recorded')
    }).catch(() => {})
    expect(await expectBalanceIsLedgerSum(accountId)).toEqual({ credits: 1000, reserved: 600 })

    const first = await withTransaction(app.services.pool, (tx) => settleReservation(deps(), r1, { credits: 120, ref: 'effect-1' }, tx))
    const second = await withTransaction(app.services.pool, (tx) => settleReservation(deps(), r1, { credits: 120, ref: 'effect-1' }, tx))
    // Held in a stripe that covers it: the charge waits for the fold, its balance after it not known yet.
    expect(first).toMatchObject({ created: true, entry: { kind: 'model_usage', credits: -120, balanceAfter: null, ref: 'effect-1' } })
    expect(second.created).toBe(false)
    expect(second.entry.id).toBe(first.entry.id)
    expect(await expectBalanceIsLedgerSum(accountId)).toEqual({ credits: 880, reserved: 300 })

    expect(await releaseReservation(deps(), r2)).toBe(true)
    expect(await releaseReservation(deps(), r2)).toBe(false)
    expect(await expectBalanceIsLedgerSum(accountId)).toEqual({ credits: 880, reserved: 0 })
    // A call given up on gives back what it holds, found by its ref (only in its own account).
    await reserveCredits(deps(), { accountId, credits: 200, ref: 'effect-3' })
    const { accountId: other } = await app.account()
    expect(await app.services.credits.releaseByRef({ accountId: other, ref: 'effect-3' })).toBe(false)
    expect(await app.services.credits.releaseByRef({ accountId, ref: 'effect-3' })).toBe(true)
    expect(await app.services.credits.releaseByRef({ accountId, ref: 'effect-3' })).toBe(false)
    expect(await expectBalanceIsLedgerSum(accountId)).toEqual({ credits: 880, reserved: 0 })
    await fold(accountId) // (or the service's folder did already)
    expect(await expectBalanceIsLedgerSum(accountId)).toEqual({ credits: 880, reserved: 0 })
    expect(await app.services.pool.query('select 1 from credit_pending where account_id = $1', [accountId])).toMatchObject({ rowCount: 0 })
    expect((await entries(accountId)).filter((e) => e.kind === 'model_usage')).toEqual([{ kind: 'model_usage', credits: -120, balanceAfter: 880, ref: 'effect-1' }])
    // Charged once: a settle after the fold finds the charge in the ledger.
    expect(await settleReservation(deps(), r1, { credits: 120, ref: 'effect-1' })).toMatchObject({ created: false, entry: { id: first.entry.id, balanceAfter: 880 } })
  })

  it('a charge above what is left is capped: the balance never goes below zero', async () => {
    const { accountId } = await app.account()
    const big = await reserveCredits(deps(), { accountId, credits: 600, ref: 'big' })
    const other = await reserveCredits(deps(), { accountId, credits: 300, ref: 'other' })
    // The provider overran: 5000 credits of usage, but only 1000 - 300 (held by `other`) can be paid.
    const { entry } = await settleReservation(deps(), big, { credits: 5000, ref: 'big' })
    expect(entry).toMatchObject({ credits: -700, balanceAfter: 300 })
    await settleReservation(deps(), other, { credits: 300, ref: 'other' })
    expect(await expectBalanceIsLedgerSum(accountId)).toEqual({ credits: 0, reserved: 0 })
    await expect(reserveCredits(deps(), { accountId, credits: 1, ref: 'more' })).rejects.toMatchObject({ status: 402, code: 'insufficient_credits' })
  })

  it('concurrent grants, reservations and settlements keep the balance equal to the ledger sum', async () => {
    const { accountId } = await app.account()
    await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        if (i % 4 === 0) return grantCredits(deps(), { accountId, credits: 50 })
        const r = await reserveCredits(deps(), { accountId, credits: 40, ref: `mix-${i}` }).catch(() => undefined)
        if (r) await settleReservation(deps(), r, { credits: 7 + i, ref: `mix-${i}` })
      }),
    )
    const { credits, reserved } = await expectBalanceIsLedgerSum(accountId)
    expect(reserved).toBe(0)
    const charged = Array.from({ length: 20 }, (_, i) => i).filter((i) => i % 4 !== 0).reduce((s, i) => s + 7 + i, 0)
    expect(credits).toBe(1000 + 5 * 50 - charged)
  })

  it("a hold takes room in a stripe without the account's row: a charge in flight (its row locked) does not hold it up", async () => {
    const { accountId } = await app.account()
    // The first hold moves a chunk of the free credits into a stripe (under the account's lock).
    const first = await reserveCredits(deps(), { accountId, credits: 10, ref: 'row-1' })
    const charge = await app.services.pool.connect()
    const holder = await app.services.pool.connect()
    try {
      await charge.query('begin')
      await charge.query('select 1 from account where id = $1 for update', [accountId])
      await holder.query("set lock_timeout = '500ms'")
      // Room in the stripe: held at once, the account's row locked all the while.
      const second = await reserveCredits(deps(), { accountId, credits: 10, ref: 'row-2' }, holder)
      expect(second).toMatchObject({ accountId, credits: 10 })
      // No room left in any stripe for this one: it needs the account's row, and waits for it.
      await expect(reserveCredits(deps(), { accountId, credits: 900, ref: 'row-3' }, holder)).rejects.toMatchObject({ code: '55P03' })
    } finally {
      await charge.query('rollback')
      await holder.query('reset lock_timeout')
      charge.release()
      holder.release()
    }
    const { rows } = await app.services.pool.query('select stripe, credits::int from credit_reservation where account_id = $1 order by ref', [accountId])
    expect(rows).toEqual([{ stripe: 0, credits: 10 }, { stripe: 0, credits: 10 }])
    expect(first.ref).toBe('row-1')
    expect(await expectBalanceIsLedgerSum(accountId)).toEqual({ credits: 1000, reserved: 20 })
  })

  it('a hold waits for room in a stripe another transaction holds rather than being refused, and a charge can spend every stripe\'s unused escrow', async () => {
    const { accountId } = await app.account()
    // All 1,000 credits parked in stripe 0 by the first hold.
    const big = await reserveCredits(deps(), { accountId, credits: 100, ref: 'wait-1' })
    const { rows: [s0] } = await app.services.pool.query('select escrow::int, held::int from credit_stripe where account_id = $1 and stripe = 0', [accountId])
    expect(s0).toEqual({ escrow: 1000, held: 100 })
    const other = await app.services.pool.connect()
    let waiting: Promise<unknown>
    try {
      await other.query('begin')
      await other.query('select 1 from credit_stripe where account_id = $1 and stripe = 0 for update', [accountId])
      waiting = reserveCredits(deps(), { accountId, credits: 100, ref: 'wait-2' })
      await waitFor(async () => (await app.services.pool.query(
        `select 1 from pg_stat_activity where wait_event_type = 'Lock' and query like '%credit_hold%'`)).rows.length > 0, 10_000)
    } finally {
      await other.query('commit')
      other.release()
    }
    expect(await waiting).toMatchObject({ credits: 100 })
    expect(await expectBalanceIsLedgerSum(accountId)).toEqual({ credits: 1000, reserved: 200 })
    // The provider overran: the charge may take every credit but the other hold's, the unused escrow included.
    const { entry } = await settleReservation(deps(), big, { credits: 5000, ref: 'wait-1' })
    expect(entry).toMatchObject({ credits: -900, balanceAfter: 100 })
    expect(await expectBalanceIsLedgerSum(accountId)).toEqual({ credits: 100, reserved: 100 })
  })

  it('a charge that overruns takes back what other stripes hold unused', async () => {
    const { accountId } = await app.account()
    const a = await reserveCredits(deps(), { accountId, credits: 10, ref: 'over-a' }) // stripe 0: 160 parked
    const locker = await app.services.pool.connect()
    let b: Awaited<ReturnType<typeof reserveCredits>>
    try {
      await locker.query('begin')
      await locker.query('select 1 from credit_stripe where account_id = $1 and stripe = 0 for update', [accountId])
      b = await reserveCredits(deps(), { accountId, credits: 10, ref: 'over-b' }) // stripe 0 busy: a second stripe
    } finally {
      await locker.query('rollback')
      locker.release()
    }
    const { rows } = await app.services.pool.query('select stripe, escrow::int, held::int from credit_stripe where account_id = $1 order by stripe', [accountId])
    expect(rows).toEqual([{ stripe: 0, escrow: 160, held: 10 }, { stripe: 1, escrow: 160, held: 10 }])
    const { entry } = await settleReservation(deps(), a, { credits: 2000, ref: 'over-a' })
    expect(entry).toMatchObject({ credits: -990, balanceAfter: 10 })
    expect(await expectBalanceIsLedgerSum(accountId)).toEqual({ credits: 10, reserved: 10 })
    await settleReservation(deps(), b, { credits: 10, ref: 'over-b' })
    expect(await expectBalanceIsLedgerSum(accountId)).toEqual({ credits: 0, reserved: 0 })
  })

  it('holds, charges, releases, grants and sales in random concurrent interleavings keep every invariant, and every free credit can be held', async () => {
    const payee = (await app.account()).accountId
    for (const seed of [1, 2, 3, 4, 5, 6]) {
      const { accountId } = await app.account()
      const random = mulberry32(seed)
      const pick = (n: number) => Math.floor(random() * n)
      const open: Array<Awaited<ReturnType<typeof reserveCredits>>> = []
      let n = 0
      for (let round = 0; round < 8; round++) {
        // Each op drawn before the round starts, so a seed names the same ops every run.
        const ops = Array.from({ length: 12 }, () => [pick(11), random()] as const)
        const taken = open.splice(0, Math.min(open.length, 6))
        await Promise.all(ops.map(async ([op, amount]) => {
          const ref = `p${seed}-${n++}`
          const held = op >= 7 ? taken.pop() : undefined
          if (op < 5) {
            const r = await reserveCredits(deps(), { accountId, credits: 1 + Math.floor(amount * 150), ref }).catch((err: unknown) => {
              expect(err).toBeInstanceOf(InsufficientCreditsError)
            })
            if (r) open.push(r)
          } else if (op === 5) await grantCredits(deps(), { accountId, credits: 1 + Math.floor(amount * 200) })
          else if (op === 6) {
            await withTransaction(app.services.pool, (tx) => app.services.credits.transfer({ fromAccountId: accountId, toAccountId: payee, credits: 1 + Math.floor(amount * 300), feeCredits: 0, ref }, tx))
              .catch((err: unknown) => expect(err).toBeInstanceOf(InsufficientCreditsError))
          } else if (held && op < 9) await settleReservation(deps(), held, { credits: Math.floor(amount * held.credits * 2), ref: held.ref })
          else if (held && op < 10) expect(await releaseReservation(deps(), held)).toBe(true)
          else if (op === 10) await fold(accountId)
          if (held && op === 10) taken.push(held)
        }))
        for (const r of taken) open.push(r)
        await expectBalanceIsLedgerSum(accountId)
      }
      for (const r of open.splice(0)) await releaseReservation(deps(), r)
      const { credits, reserved } = await expectBalanceIsLedgerSum(accountId)
      expect(reserved).toBe(0)
      // Whatever the stripes park, all of it can be held at once; one credit more cannot.
      if (credits > 0) {
        await expect(reserveCredits(deps(), { accountId, credits: credits + 1, ref: `all+1-${seed}` })).rejects.toMatchObject({ status: 402 })
        await reserveCredits(deps(), { accountId, credits, ref: `all-${seed}` })
        expect(await expectBalanceIsLedgerSum(accountId)).toEqual({ credits, reserved: credits })
      }
    }
  })

  it('a process killed -9 in the middle of a fold folds nothing: the charges stay pending, and the next fold takes each once', async () => {
    const { accountId } = await app.account()
    const held = []
    for (let i = 0; i < 5; i++) held.push(await reserveCredits(deps(), { accountId, credits: 50, ref: `kill-${i}` }))
    const before = await expectBalanceIsLedgerSum(accountId)
    // The fold runs in a process of its own. It takes the account's row first (so the service's own
    // folder passes this account by), is told to fold once the charges are made, and stops in the
    // fold's transaction, before it commits.
    const child = spawn(process.execPath, ['--input-type=module', '-e', `
      import pg from 'pg'
      const db = new pg.Client(${JSON.stringify(dbUrl)})
      await db.connect()
      await db.query('begin')
      await db.query('select 1 from account where id = $1 for no key update', [${JSON.stringify(accountId)}])
      console.log('locked')
      process.stdin.once('data', async () => {
        const { rows } = await db.query('select credits_fold($1) as n', [${JSON.stringify(accountId)}])
        console.log('folded ' + rows[0].n)
      })`], { stdio: ['pipe', 'pipe', 'inherit'] })
    const lines: string[] = []
    child.stdout!.on('data', (d: Buffer) => lines.push(...d.toString().trim().split('\n')))
    await waitFor(async () => lines.includes('locked'), 10_000)
    // Charges in stripes need no account row: made while the child holds it.
    for (const [i, r] of held.entries()) await settleReservation(deps(), r, { credits: 10 + i, ref: r.ref })
    child.stdin!.write('go\n')
    await waitFor(async () => lines.includes('folded 5'), 10_000)
    child.kill('SIGKILL')
    // Its backend ends the transaction once it reads the closed connection: nothing of the fold stays.
    await waitFor(async () => (await fold(accountId)) === 5 || (await entries(accountId)).length === 6, 10_000)
    expect(await expectBalanceIsLedgerSum(accountId)).toEqual({ credits: before.credits - 60, reserved: 0 })
    expect((await entries(accountId)).filter((e) => e.ref.startsWith('kill-')).map((e) => e.credits)).toEqual([-10, -11, -12, -13, -14])
    expect(Number((await app.services.pool.query('select count(*) from credit_pending where account_id = $1', [accountId])).rows[0].count)).toBe(0)
  })

  it('refuses non-integer or non-positive amounts', async () => {
    const { accountId } = await app.account()
    await expect(grantCredits(deps(), { accountId, credits: 0 })).rejects.toMatchObject({ status: 422, fieldErrors: { credits: expect.any(String) } })
    await expect(reserveCredits(deps(), { accountId, credits: 1.5, ref: 'x' })).rejects.toMatchObject({ status: 422 })
  })
})

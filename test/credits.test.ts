import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type TestApp } from './support/app.ts'
import { withTransaction } from '../src/adapters/db/transaction.ts'
import { grantCredits } from '../src/domain/billing/grantCredits.ts'
import { releaseReservation, reserveCredits, settleReservation } from '../src/domain/billing/creditReservations.ts'
import { InsufficientCreditsError } from '../src/domain/errors.ts'

const run = promisify(execFile)
let app: TestApp
let dbUrl: string

beforeAll(async () => {
  app = await startTestApp({ STARTER_CREDITS: '1000' })
  dbUrl = app.services.config.databaseUrl!
})
afterAll(() => app.close())

const deps = () => ({ credits: app.services.credits })
async function entries(accountId: string) {
  const { rows } = await app.services.pool.query<{ kind: string; credits: string; balance_after: string; ref: string }>(
    'select kind, credits, balance_after, ref from credit_entry where account_id = $1 order by created_at, id',
    [accountId],
  )
  return rows.map((r) => ({ kind: r.kind, credits: Number(r.credits), balanceAfter: Number(r.balance_after), ref: r.ref }))
}
/** The ledger's invariant: the balance is the sum of the entries, and the last balance_after. */
async function expectBalanceIsLedgerSum(accountId: string) {
  const { rows } = await app.services.pool.query<{ credits: string; reserved: string; sum: string | null }>(
    `select a.credits, a.credits_reserved as reserved, (select sum(credits) from credit_entry where account_id = a.id) as sum
       from account a where a.id = $1`,
    [accountId],
  )
  const { credits, reserved, sum } = rows[0]!
  expect(Number(credits)).toBe(Number(sum ?? 0))
  expect(Number(credits)).toBeGreaterThanOrEqual(Number(reserved))
  const all = await entries(accountId)
  if (all.length) expect(all.at(-1)!.balanceAfter).toBe(Number(credits))
  return { credits: Number(credits), reserved: Number(reserved) }
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
    expect(first).toMatchObject({ created: true, entry: { kind: 'model_usage', credits: -120, balanceAfter: 880, ref: 'effect-1' } })
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
    expect((await entries(accountId)).filter((e) => e.kind === 'model_usage')).toEqual([{ kind: 'model_usage', credits: -120, balanceAfter: 880, ref: 'effect-1' }])
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

  it('refuses non-integer or non-positive amounts', async () => {
    const { accountId } = await app.account()
    await expect(grantCredits(deps(), { accountId, credits: 0 })).rejects.toMatchObject({ status: 422, fieldErrors: { credits: expect.any(String) } })
    await expect(reserveCredits(deps(), { accountId, credits: 1.5, ref: 'x' })).rejects.toMatchObject({ status: 422 })
  })
})

import type pg from 'pg'
import { randomUUID } from 'node:crypto'
import { withTransaction } from './transaction.ts'
import { InsufficientCreditsError, NotFoundError } from '../../domain/errors.ts'
import type { CreditKind } from '../../domain/billing/creditKinds.ts'
import type { CreditEntry, CreditReservation, CreditsRepository, Queryable } from '../../domain/billing/ports.ts'
import type { SqlGuard } from '../../runtime/sql.ts'

/**
 * The condition that the account covers `required` credits (balance less reservations), for a
 * creation's own insert (migration Migration20261128000000_account_covers): the insert fails
 * whole with SQLSTATE CR402 otherwise, which `coverRefusalOf` turns into the 402.
 */
export const coversGuard = (accountId: string, required: number): SqlGuard => ({
  name: 'account.covers',
  sql: 'account_covers($1::uuid, $2::bigint)',
  values: [accountId, Math.ceil(required)],
})

/** A creation refused by `coversGuard`, as the API's 402 `insufficient_credits` (undefined for any other error). */
export function coverRefusalOf(err: unknown, required: number): InsufficientCreditsError | undefined {
  const e = err as { code?: string; detail?: string }
  return e.code === 'CR402' ? new InsufficientCreditsError({ available: Number(e.detail ?? 0), required }) : undefined
}

type EntryRow = {
  id: string
  account_id: string
  kind: CreditKind
  credits: string
  balance_after: string
  ref: string
  created_at: Date | string
  cursor_at: string
}

const ENTRY_COLUMNS = 'id, account_id, kind, credits, balance_after, ref, created_at, created_at::text as cursor_at'

const entryOf = (r: EntryRow): CreditEntry => ({
  id: r.id,
  accountId: r.account_id,
  kind: r.kind,
  credits: Number(r.credits),
  balanceAfter: Number(r.balance_after),
  ref: r.ref,
  createdAt: new Date(r.created_at).toISOString(),
  cursorAt: r.cursor_at,
})

const RESERVE_SQL = `
  with prior as (
    select id, credits from credit_reservation where account_id = $1 and ref = $2
  ), acct as (
    update account set credits_reserved = credits_reserved + $3
     where id = $1 and credits - credits_reserved >= $3 and not exists (select 1 from prior)
    returning id
  ), ins as (
    insert into credit_reservation (id, account_id, credits, ref) select $4, $1, $3, $2 from acct
    returning id, credits
  )
  select coalesce((select id from ins), (select id from prior)) as id,
         coalesce((select credits from ins), (select credits from prior)) as credits,
         (select credits - credits_reserved from account where id = $1) as available`

/**
 * A settle's branches: the account locked, the reservation dropped, the charge (capped at what
 * the account can pay) written with the balance after it, or, when this ref was charged already,
 * only the reservation given back. Named `settle_*` so they can join another statement's WITH.
 */
const SETTLE_BRANCHES = [
  { as: 'settle_acct', sql: `select credits, credits_reserved from account where id = $1 for update` },
  { as: 'settle_held', sql: `delete from credit_reservation where id = $2 and account_id = $1 returning credits` },
  { as: 'settle_ex', sql: `select ${ENTRY_COLUMNS} from credit_entry where kind = $3 and ref = $4` },
  {
    as: 'settle_calc',
    sql: `select a.credits as balance, a.credits_reserved - coalesce((select sum(credits) from settle_held), 0) as others from settle_acct a`,
  },
  { as: 'settle_charge', sql: `select balance, others, least($5::bigint, balance - others) as amount from settle_calc` },
  {
    as: 'settle_e',
    sql: `insert into credit_entry (id, account_id, kind, credits, balance_after, ref)
    select $6, $1, $3, -c.amount, c.balance - c.amount, $4 from settle_charge c where not exists (select 1 from settle_ex)
    on conflict (kind, ref) do nothing
    returning ${ENTRY_COLUMNS}`,
  },
  {
    as: 'settle_u',
    sql: `update account set credits = c.balance - coalesce((select -credits from settle_e), 0), credits_reserved = c.others, updated_at = now()
      from settle_charge c where account.id = $1`,
  },
]

const SETTLE_SQL = `
  with ${SETTLE_BRANCHES.map((b) => `${b.as} as (${b.sql})`).join(',\n  ')}
  select (select row_to_json(e) from settle_e e) as created, (select row_to_json(ex) from settle_ex ex) as existing
    from settle_acct`

const settleValues = (reservation: CreditReservation, { credits, ref, kind }: { credits: number; ref: string; kind: CreditKind }) =>
  [reservation.accountId, reservation.id, kind, ref, credits, randomUUID()]

/** Drops an account's reservation found by its `id` or its `ref` ($1) and gives its credits back. */
const releaseSql = (by: 'id' | 'ref') => `
  with held as (delete from credit_reservation where ${by} = $1 and account_id = $2 returning credits)
  update account set credits_reserved = credits_reserved - (select sum(credits) from held)
   where id = $2 and exists (select 1 from held)`
const RELEASE_SQL = { id: releaseSql('id'), ref: releaseSql('ref') }

async function lockAccount(db: Queryable, accountId: string) {
  const { rows } = await db.query<{ credits: string; credits_reserved: string }>(
    'select credits, credits_reserved from account where id = $1 for update',
    [accountId],
  )
  if (!rows[0]) throw new NotFoundError('Account')
  return { balance: Number(rows[0].credits), reserved: Number(rows[0].credits_reserved) }
}

async function existingEntry(db: Queryable, kind: CreditKind, ref: string) {
  const { rows } = await db.query<EntryRow>(`select ${ENTRY_COLUMNS} from credit_entry where kind = $1 and ref = $2`, [kind, ref])
  return rows[0] ? entryOf(rows[0]) : undefined
}

/** Inserts the entry and moves the balance (one statement); the caller holds the account lock. */
async function write(db: Queryable, e: { accountId: string; kind: CreditKind; credits: number; ref: string; balanceAfter: number; reservedAfter: number }) {
  const { rows } = await db.query<EntryRow>({
    name: 'credits.write',
    text: `with e as (
             insert into credit_entry (id, account_id, kind, credits, balance_after, ref) values ($1, $2, $3, $4, $5, $6)
             on conflict (kind, ref) do nothing returning ${ENTRY_COLUMNS}
           ), u as (
             update account set credits = $5, credits_reserved = $7, updated_at = now() where id = $2 and exists (select 1 from e)
           )
           select * from e`,
    values: [randomUUID(), e.accountId, e.kind, e.credits, e.balanceAfter, e.ref, e.reservedAfter],
  })
  // Taken by another account's writer meanwhile (refs are meant to be unique): nothing moves.
  if (!rows[0]) return { entry: (await existingEntry(db, e.kind, e.ref))!, created: false }
  return { entry: entryOf(rows[0]), created: true }
}

/**
 * The credit ledger in SQL. Plain statements rather than MikroORM because a charge must run on
 * the caller's own connection, inside the transaction that records the call's result. Every
 * write locks the account row, which serialises one account's writers while other accounts
 * proceed in parallel: a reservation and a release are one statement each, so they hold it only
 * while they run; a charge (settle, append) holds it to the end of the caller's transaction.
 * A model call costs two statements here (reserve; settle in the finish), where it took eleven
 * (a six-statement reservation transaction and a five-statement settle): each round trip costs
 * about 0.3-0.5 ms on the 2-core benchmark machine (docs/benchmarks.md, chat turn).
 *
 * @example
 * const credits = createCreditsRepository(pool)
 * const r = await credits.reserve({ accountId, credits: 40, ref: effectId })
 * await withTransaction(pool, (tx) => credits.settle(r, { credits: 12, ref: effectId, kind: 'model_usage' }, tx))
 */
export function createCreditsRepository(pool: pg.Pool): CreditsRepository {
  /** Runs `fn` in the caller's transaction, or in one of its own. */
  const inTx = <T>(tx: Queryable | undefined, fn: (db: Queryable) => Promise<T>) => (tx ? fn(tx) : withTransaction(pool, fn))
  async function releaseBy(by: 'id' | 'ref', key: string, accountId: string, tx: Queryable | undefined) {
    const { rowCount } = await (tx ?? (pool as Queryable)).query({ name: `credits.release.${by}`, text: RELEASE_SQL[by], values: [key, accountId] })
    return (rowCount ?? 0) > 0
  }

  return {
    append({ accountId, kind, credits, ref }, tx) {
      return inTx(tx, async (db) => {
        const { balance, reserved } = await lockAccount(db, accountId)
        const existing = await existingEntry(db, kind, ref)
        if (existing) return { entry: existing, created: false }
        if (balance + credits < reserved) throw new InsufficientCreditsError({ available: balance - reserved, required: -credits })
        return write(db, { accountId, kind, credits, ref, balanceAfter: balance + credits, reservedAfter: reserved })
      })
    },

    // One statement: the account row is locked only while it runs, so one account's many model
    // calls do not queue behind each other's transactions. The update re-checks the room on the
    // row as it is once locked, and the table's check (credits >= credits_reserved) backs it.
    async reserve({ accountId, credits, ref }, tx) {
      const { rows } = await (tx ?? (pool as Queryable)).query<{ id: string | null; credits: string | null; available: string | null }>({
        name: 'credits.reserve',
        text: RESERVE_SQL,
        values: [accountId, ref, credits, randomUUID()],
      })
      const row = rows[0]!
      if (row.available === null) throw new NotFoundError('Account')
      if (row.id === null) throw new InsufficientCreditsError({ available: Number(row.available), required: credits })
      return { id: row.id, accountId, credits: Number(row.credits), ref }
    },

    // One statement (SETTLE_BRANCHES).
    async settle(reservation, charge, tx) {
      const { kind, ref } = charge
      const { rows } = await (tx ?? (pool as Queryable)).query<{ created: EntryRow | null; existing: EntryRow | null }>({
        name: 'credits.settle',
        text: SETTLE_SQL,
        values: settleValues(reservation, charge),
      })
      if (!rows[0]) throw new NotFoundError('Account')
      const { created, existing } = rows[0]
      if (created) return { entry: entryOf(created), created: true }
      // Charged before (a retried finish), or taken meanwhile by another account's writer (refs are meant to be unique).
      return { entry: existing ? entryOf(existing) : (await existingEntry(tx ?? pool, kind, ref))!, created: false }
    },

    reserveWrite: ({ id, accountId, credits, ref }) => ({
      name: 'credits.reserve.write',
      with: [
        { as: 'hold_acct', sql: 'update account set credits_reserved = credits_reserved + $3 where id = $1 returning id' },
        { as: 'hold_ins', sql: 'insert into credit_reservation (id, account_id, credits, ref) select $4, $1, $3, $2 from hold_acct' },
      ],
      values: [accountId, ref, credits, id],
    }),
    settleWrite: (reservation, charge) => ({ name: 'credits.settle.write', with: SETTLE_BRANCHES, values: settleValues(reservation, charge) }),

    release: (reservation, tx) => releaseBy('id', reservation.id, reservation.accountId, tx),
    releaseByRef: ({ accountId, ref }, tx) => releaseBy('ref', ref, accountId, tx),

    // Locks both rows in id order (as every multi-account writer must, so two sales never deadlock),
    // then writes the three entries; unique (kind, ref) makes a retry write nothing.
    async transfer({ fromAccountId, toAccountId, credits, feeCredits, ref, releaseRef }, db) {
      for (const id of [fromAccountId, toAccountId].sort()) await lockAccount(db, id)
      const prior = await existingEntry(db, 'market_purchase', ref)
      if (prior) return { entries: [prior], created: false }
      if (releaseRef) await db.query({ name: 'credits.release.ref', text: RELEASE_SQL.ref, values: [releaseRef, fromAccountId] })
      const payer = await lockAccount(db, fromAccountId)
      if (payer.balance - payer.reserved < credits) throw new InsufficientCreditsError({ available: payer.balance - payer.reserved, required: credits })
      const paid = await write(db, { accountId: fromAccountId, kind: 'market_purchase', credits: -credits, ref, balanceAfter: payer.balance - credits, reservedAfter: payer.reserved })
      const payee = await lockAccount(db, toAccountId)
      const sold = await write(db, { accountId: toAccountId, kind: 'market_sale', credits, ref, balanceAfter: payee.balance + credits, reservedAfter: payee.reserved })
      const entries = [paid.entry, sold.entry]
      if (feeCredits > 0) {
        const fee = await write(db, { accountId: toAccountId, kind: 'market_fee', credits: -feeCredits, ref, balanceAfter: payee.balance + credits - feeCredits, reservedAfter: payee.reserved })
        entries.push(fee.entry)
      }
      return { entries, created: true }
    },

    async balance(accountId) {
      const { rows } = await pool.query<{ credits: string; credits_reserved: string }>('select credits, credits_reserved from account where id = $1', [accountId])
      if (!rows[0]) throw new NotFoundError('Account')
      return { credits: Number(rows[0].credits), reserved: Number(rows[0].credits_reserved) }
    },

    async spentSince(accountId, { day, month }) {
      const { rows } = await pool.query<{ day: string; month: string }>(
        `select coalesce(-sum(credits) filter (where created_at >= $2), 0) as day,
                coalesce(-sum(credits) filter (where created_at >= $3), 0) as month
           from credit_entry where account_id = $1 and credits < 0 and created_at >= least($2::timestamptz, $3::timestamptz)`,
        [accountId, day, month],
      )
      return { day: Number(rows[0]?.day ?? 0), month: Number(rows[0]?.month ?? 0) }
    },

    async list(accountId, { limit, kind, after }) {
      const params: unknown[] = [accountId, limit + 1]
      const conds: string[] = []
      if (kind) conds.push(`kind = $${params.push(kind)}`)
      if (after) conds.push(`(created_at, id) < ($${params.push(after.createdAt)}::timestamptz, $${params.push(after.id)}::uuid)`)
      const { rows } = await pool.query<EntryRow>(
        `select ${ENTRY_COLUMNS} from credit_entry where account_id = $1 ${conds.map((c) => `and ${c}`).join(' ')}
          order by created_at desc, id desc limit $2`,
        params,
      )
      return { entries: rows.slice(0, limit).map(entryOf), more: rows.length > limit }
    },
  }
}

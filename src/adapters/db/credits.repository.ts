import type pg from 'pg'
import { randomUUID } from 'node:crypto'
import { withTransaction } from './transaction.ts'
import { InsufficientCreditsError, NotFoundError } from '../../domain/errors.ts'
import type { CreditKind } from '../../domain/billing/creditKinds.ts'
import type { CreditEntry, CreditReservation, CreditsRepository, Queryable } from '../../domain/billing/ports.ts'
import type { SqlGuard } from '../../actors/runtime/index.ts'

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
  balance_after: string | null
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
  balanceAfter: r.balance_after === null ? null : Number(r.balance_after),
  ref: r.ref,
  createdAt: new Date(r.created_at).toISOString(),
  cursorAt: r.cursor_at,
})

// The hold is `credit_hold`'s (Migration20261130010000_credit_stripes): room in a stripe no one
// holds, without the account's row, else under its lock; SQLSTATE CR402 when the account's
// credits do not cover it.
const RESERVE_SQL = `
  with prior as (
    select id, credits from credit_reservation where account_id = $1 and ref = $2
  ), ins as (
    insert into credit_reservation (id, account_id, credits, ref, stripe)
    select $4, $1, $3, $2, credit_hold($1, $3) where not exists (select 1 from prior)
    returning id, credits
  )
  select coalesce((select id from ins), (select id from prior)) as id,
         coalesce((select credits from ins), (select credits from prior)) as credits`

/**
 * A settle's branches. A hold in a stripe that covers the charge (the rule for a model call): the
 * stripe's escrow pays, its `spent` grows and the charge waits in `credit_pending` for the fold
 * (`credits_fold`, Migration20261207130000_credit_fold), the account's row untouched. Otherwise (a
 * hold on the account's row, a charge above its hold, no hold left): the account locked, the charge
 * (capped at what the account can pay) written with the balance after it and the account's next
 * `seq`. When this ref was charged already, only the reservation is given back. Named `settle_*` so
 * they can join another statement's WITH.
 */
const SETTLE_BRANCHES = [
  { as: 'settle_held', sql: `delete from credit_reservation where id = $2 and account_id = $1 returning credits, stripe` },
  // Read after the delete (which waits for a concurrent settle of the same reservation), with a snapshot of its own.
  { as: 'settle_ex', sql: `select * from credits_charged($3, $4, (select count(*) from settle_held))` },
  { as: 'settle_fast', sql: `select credits as held, stripe from settle_held where stripe is not null and $5::bigint <= credits` },
  {
    as: 'settle_p',
    sql: `insert into credit_pending (id, account_id, stripe, kind, credits, ref)
    select $6, $1, f.stripe, $3, -$5::bigint, $4 from settle_fast f where not exists (select 1 from settle_ex)
    on conflict (kind, ref) do nothing
    returning id, account_id, kind, credits, null::bigint as balance_after, ref, created_at, created_at::text as cursor_at`,
  },
  {
    as: 'settle_fs',
    sql: `update credit_stripe set held = credit_stripe.held - f.held, spent = spent + coalesce((select -credits from settle_p), 0)
      from settle_fast f where credit_stripe.account_id = $1 and credit_stripe.stripe = f.stripe`,
  },
  { as: 'settle_acct', sql: `select credits, credits_reserved, ledger_seq from account where id = $1 and not exists (select 1 from settle_fast) for no key update` },
  {
    as: 'settle_calc',
    sql: `select a.credits as balance, a.credits_reserved as reserved, a.ledger_seq as seq, coalesce(h.credits, 0) as held, h.stripe,
                 $5::bigint > a.credits - a.credits_reserved + coalesce(h.credits, 0) as over
            from settle_acct a left join settle_held h on true`,
  },
  // A charge above what the hold and the free credits cover (the provider overran) may also spend
  // what the account's stripes hold unused: \`credits_settle_over\` takes it back from them (their
  // rows locked after the account's) and gives the hold's stripe its hold back, so the account's
  // row counts all of it as free.
  { as: 'settle_back', sql: `select case when over then credits_settle_over($1, stripe, held) else 0 end as back from settle_calc` },
  {
    as: 'settle_charge',
    sql: `select c.balance, c.reserved - b.back as reserved, c.seq, c.held, c.stripe, c.over,
                 least($5::bigint, c.balance - c.reserved + b.back + c.held) as amount
            from settle_calc c, settle_back b`,
  },
  {
    as: 'settle_e',
    sql: `insert into credit_entry (id, account_id, kind, credits, balance_after, ref, seq)
    select $6, $1, $3, -c.amount, c.balance - c.amount, $4, c.seq + 1 from settle_charge c where not exists (select 1 from settle_ex)
    on conflict (kind, ref) do nothing
    returning ${ENTRY_COLUMNS}`,
  },
  // What the charge took: the account's balance falls by it; a hold on the account's row is given
  // back whole, one in a stripe spends the stripe's escrow (up to the hold) and leaves the rest there.
  { as: 'settle_paid', sql: `select coalesce((select -credits from settle_e), 0) as paid, (select count(*) from settle_e) as n` },
  {
    as: 'settle_u',
    sql: `update account set credits = c.balance - p.paid, ledger_seq = c.seq + p.n,
            credits_reserved = c.reserved - (case when c.stripe is null or c.over then c.held else least(p.paid, c.held) end), updated_at = now()
      from settle_charge c, settle_paid p where account.id = $1`,
  },
  {
    as: 'settle_s',
    sql: `update credit_stripe set held = credit_stripe.held - c.held, escrow = escrow - least(p.paid, c.held)
      from settle_charge c, settle_paid p where credit_stripe.account_id = $1 and credit_stripe.stripe = c.stripe and not c.over`,
  },
]

const SETTLE_SQL = `
  with ${SETTLE_BRANCHES.map((b) => `${b.as} as (${b.sql})`).join(',\n  ')}
  select coalesce((select row_to_json(e) from settle_e e), (select row_to_json(p) from settle_p p)) as created,
         (select row_to_json(ex) from settle_ex ex limit 1) as existing,
         exists (select 1 from settle_acct) or exists (select 1 from settle_fast) as found`

const settleValues = (reservation: CreditReservation, { credits, ref, kind }: { credits: number; ref: string; kind: CreditKind }) =>
  [reservation.accountId, reservation.id, kind, ref, credits, randomUUID()]

/**
 * Drops an account's reservation found by its `id` or its `ref` ($1) and gives its credits back:
 * to the account's row, or to the stripe it was held in (the account's row untouched).
 */
const releaseSql = (by: 'id' | 'ref') => `
  with held as (delete from credit_reservation where ${by} = $1 and account_id = $2 returning credits, stripe),
  direct as (
    update account set credits_reserved = credits_reserved - (select sum(credits) from held where stripe is null)
     where id = $2 and exists (select 1 from held where stripe is null)
  ), striped as (
    update credit_stripe set held = credit_stripe.held - h.credits from held h where credit_stripe.account_id = $2 and credit_stripe.stripe = h.stripe
  )
  select count(*)::int as n from held`
const RELEASE_SQL = { id: releaseSql('id'), ref: releaseSql('ref') }

/**
 * Locks the account's row and reads it. With `need`, when its free credits are fewer, what its
 * stripes hold unused is taken back first (`credits_reclaim`), so credits parked there pay.
 */
async function lockAccount(db: Queryable, accountId: string, need?: number) {
  const { rows } = await db.query<{ credits: string; credits_reserved: string; ledger_seq: string }>(
    'select credits, credits_reserved, ledger_seq from account where id = $1 for no key update',
    [accountId],
  )
  if (!rows[0]) throw new NotFoundError('Account')
  const locked = { balance: Number(rows[0].credits), reserved: Number(rows[0].credits_reserved), seq: Number(rows[0].ledger_seq) }
  if (need === undefined || locked.balance - locked.reserved >= need) return locked
  const { rows: [back] } = await db.query<{ unused: string }>('select credits_reclaim($1) as unused', [accountId])
  return { ...locked, reserved: locked.reserved - Number(back!.unused) }
}

/** The entry made under (kind, ref), in the ledger or still pending. */
async function existingEntry(db: Queryable, kind: CreditKind, ref: string) {
  const { rows } = await db.query<EntryRow>(`select ${ENTRY_COLUMNS} from credits_charged($1, $2, 0)`, [kind, ref])
  return rows[0] ? entryOf(rows[0]) : undefined
}

/**
 * Inserts the entry as the account's `seq`-th and moves the balance (one statement); the caller
 * holds the account lock and read `seq - 1` as its `ledger_seq`.
 */
async function write(db: Queryable, e: { accountId: string; kind: CreditKind; credits: number; ref: string; balanceAfter: number; reservedAfter: number; seq: number }) {
  const { rows } = await db.query<EntryRow>({
    name: 'credits.write',
    text: `with e as (
             insert into credit_entry (id, account_id, kind, credits, balance_after, ref, seq) values ($1, $2, $3, $4, $5, $6, $8)
             on conflict (kind, ref) do nothing returning ${ENTRY_COLUMNS}
           ), u as (
             update account set credits = $5, credits_reserved = $7, ledger_seq = $8, updated_at = now() where id = $2 and exists (select 1 from e)
           )
           select * from e`,
    values: [randomUUID(), e.accountId, e.kind, e.credits, e.balanceAfter, e.ref, e.reservedAfter, e.seq],
  })
  // Taken by another account's writer meanwhile (refs are meant to be unique): nothing moves.
  if (!rows[0]) return { entry: (await existingEntry(db, e.kind, e.ref))!, created: false }
  return { entry: entryOf(rows[0]), created: true }
}

/**
 * A sale's three entries (`CreditsRepository.transfer`). Locks both rows in id order (as every multi-account writer must, so two sales never deadlock),
 * then writes the three entries; unique (kind, ref) makes a retry write nothing.
 */
async function transferCredits({ fromAccountId, toAccountId, credits, feeCredits, ref, releaseRef }: Parameters<CreditsRepository['transfer']>[0], db: Queryable) {
  for (const id of [fromAccountId, toAccountId].sort()) await lockAccount(db, id)
  const prior = await existingEntry(db, 'market_purchase', ref)
  if (prior) return { entries: [prior], created: false }
  if (releaseRef) await db.query({ name: 'credits.release.ref', text: RELEASE_SQL.ref, values: [releaseRef, fromAccountId] })
  const payer = await lockAccount(db, fromAccountId, credits)
  if (payer.balance - payer.reserved < credits) throw new InsufficientCreditsError({ available: payer.balance - payer.reserved, required: credits })
  const paid = await write(db, { accountId: fromAccountId, kind: 'market_purchase', credits: -credits, ref, balanceAfter: payer.balance - credits, reservedAfter: payer.reserved, seq: payer.seq + 1 })
  const payee = await lockAccount(db, toAccountId)
  const sold = await write(db, { accountId: toAccountId, kind: 'market_sale', credits, ref, balanceAfter: payee.balance + credits, reservedAfter: payee.reserved, seq: payee.seq + 1 })
  const entries = [paid.entry, sold.entry]
  if (feeCredits > 0) {
    const fee = await write(db, { accountId: toAccountId, kind: 'market_fee', credits: -feeCredits, ref, balanceAfter: payee.balance + credits - feeCredits, reservedAfter: payee.reserved, seq: payee.seq + 2 })
    entries.push(fee.entry)
  }
  return { entries, created: true }
}

/**
 * The credit ledger in SQL. Plain statements rather than MikroORM because a charge must run on
 * the caller's own connection, inside the transaction that records the call's result. A hold takes
 * room in one of the account's stripes that no other transaction holds, and a release gives it
 * back there (`credit_hold`, Migration20261130010000_credit_stripes); only when no such stripe has
 * room does a hold lock the account's row, to move a chunk of free credits into a stripe. A charge
 * that its hold in a stripe covers spends that stripe's escrow and waits in `credit_pending` for
 * the fold (Migration20261207130000_credit_fold), the account's row untouched; any other charge, a
 * grant and a sale lock the account's row and write their entries as the next of its ledger. A model call costs
 * two statements here (reserve; settle in the finish), where it took eleven (a six-statement
 * reservation transaction and a five-statement settle): each round trip costs about 0.3-0.5 ms on
 * the 2-core benchmark machine (docs/benchmarks.md, chat turn).
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
    const { rows } = await (tx ?? (pool as Queryable)).query<{ n: number }>({ name: `credits.release.${by}`, text: RELEASE_SQL[by], values: [key, accountId] })
    return rows[0]!.n > 0
  }

  async function fold(accountId: string) {
    const { rows } = await pool.query<{ n: number }>({ name: 'credits.fold', text: 'select credits_fold($1) as n', values: [accountId] })
    return rows[0]!.n
  }

  return {
    fold,
    append({ accountId, kind, credits, ref }, tx) {
      return inTx(tx, async (db) => {
        const { balance, reserved, seq } = await lockAccount(db, accountId, -credits)
        const existing = await existingEntry(db, kind, ref)
        if (existing) return { entry: existing, created: false }
        if (balance + credits < reserved) throw new InsufficientCreditsError({ available: balance - reserved, required: -credits })
        return write(db, { accountId, kind, credits, ref, balanceAfter: balance + credits, reservedAfter: reserved, seq: seq + 1 })
      })
    },

    // One statement: a stripe's room, the account's row not even locked (credit_hold), or the
    // account's row locked only while it runs.
    async reserve({ accountId, credits, ref }, tx) {
      try {
        const { rows } = await (tx ?? (pool as Queryable)).query<{ id: string; credits: string }>({
          name: 'credits.reserve',
          text: RESERVE_SQL,
          values: [accountId, ref, credits, randomUUID()],
        })
        return { id: rows[0]!.id, accountId, credits: Number(rows[0]!.credits), ref }
      } catch (err) {
        if ((err as { code?: string }).code === 'CR404') throw new NotFoundError('Account')
        throw coverRefusalOf(err, credits) ?? err
      }
    },

    // One statement (SETTLE_BRANCHES).
    async settle(reservation, charge, tx) {
      const { kind, ref } = charge
      const { rows } = await (tx ?? (pool as Queryable)).query<{ created: EntryRow | null; existing: EntryRow | null; found: boolean }>({
        name: 'credits.settle',
        text: SETTLE_SQL,
        values: settleValues(reservation, charge),
      })
      if (!rows[0]?.found) throw new NotFoundError('Account')
      const { created, existing } = rows[0]
      if (created) return { entry: entryOf(created), created: true }
      // Charged before (a retried finish), or taken meanwhile by another account's writer (refs are meant to be unique).
      return { entry: existing ? entryOf(existing) : (await existingEntry(tx ?? pool, kind, ref))!, created: false }
    },

    reserveWrite: ({ id, accountId, credits, ref }) => ({
      name: 'credits.reserve.write',
      with: [{ as: 'hold_ins', sql: 'insert into credit_reservation (id, account_id, credits, ref, stripe) select $4, $1, $3, $2, credit_hold($1, $3)' }],
      values: [accountId, ref, credits, id],
    }),
    settleWrite: (reservation, charge) => ({ name: 'credits.settle.write', with: SETTLE_BRANCHES, values: settleValues(reservation, charge) }),

    release: (reservation, tx) => releaseBy('id', reservation.id, reservation.accountId, tx),
    releaseByRef: ({ accountId, ref }, tx) => releaseBy('ref', ref, accountId, tx),

    transfer: transferCredits,

    async balance(accountId) {
      // What stripes hold unused is the account's to spend: not reported as held.
      const { rows } = await pool.query<{ credits: string; credits_reserved: string }>(
        'select credits_balance(id) as credits, credits_held(id) as credits_reserved from account where id = $1',
        [accountId],
      )
      if (!rows[0]) throw new NotFoundError('Account')
      return { credits: Number(rows[0].credits), reserved: Number(rows[0].credits_reserved) }
    },

    async spentSince(accountId, { day, month }) {
      const { rows } = await pool.query<{ day: string; month: string }>(
        `select coalesce(-sum(credits) filter (where created_at >= $2), 0) as day,
                coalesce(-sum(credits) filter (where created_at >= $3), 0) as month
           from (select credits, created_at from credit_entry where account_id = $1 and credits < 0 and created_at >= least($2::timestamptz, $3::timestamptz)
                 union all select credits, created_at from credit_pending where account_id = $1 and credits < 0) e`,
        [accountId, day, month],
      )
      return { day: Number(rows[0]?.day ?? 0), month: Number(rows[0]?.month ?? 0) }
    },

    // In the ledger's order (`seq`), the pending charges folded first so each has its balance after it.
    async list(accountId, { limit, kind, after }) {
      await fold(accountId)
      const params: unknown[] = [accountId, limit + 1]
      const conds: string[] = []
      if (kind) conds.push(`kind = $${params.push(kind)}`)
      if (after) conds.push(`seq < (select seq from credit_entry where id = $${params.push(after.id)}::uuid and account_id = $1)`)
      const { rows } = await pool.query<EntryRow>(
        `select ${ENTRY_COLUMNS} from credit_entry where account_id = $1 ${conds.map((c) => `and ${c}`).join(' ')}
          order by seq desc limit $2`,
        params,
      )
      return { entries: rows.slice(0, limit).map(entryOf), more: rows.length > limit }
    },
  }
}

const FOLD_BATCH = 500

/**
 * Folds the accounts' pending charges into their rows and the ledger (`credits_fold_due`), a batch
 * of accounts each `everyMs`, on every node: an account another node is folding is skipped.
 *
 * @example
 * const folder = startCreditFolder(pool, logger)
 * folder.stop()
 */
export function startCreditFolder(pool: pg.Pool, logger: { warn(obj: object, msg: string): void }, everyMs = 1000) {
  let busy = false
  const sweep = async () => {
    if (busy) return
    busy = true
    try {
      // Once a tick per account: a batch as large as asked for may have left more accounts due.
      while ((await pool.query<{ n: number }>({ name: 'credits.fold.due', text: 'select credits_fold_due($1) as n', values: [FOLD_BATCH] })).rows[0]!.n === FOLD_BATCH && !stopped);
    } catch (err) {
      logger.warn({ err }, 'credits: the fold failed; the next sweep tries again')
    } finally {
      busy = false
    }
  }
  let stopped = false
  const timer = setInterval(() => void sweep(), everyMs)
  timer.unref()
  return { sweep, stop: () => { stopped = true; clearInterval(timer) } }
}

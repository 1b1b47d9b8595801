import type pg from 'pg'
import { randomUUID } from 'node:crypto'
import { withTransaction } from './transaction.ts'
import { InsufficientCreditsError, NotFoundError } from '../domain/errors.ts'
import type { CreditKind } from '../domain/billing/creditKinds.ts'
import type { CreditEntry, CreditReservation, CreditsRepository, Queryable } from '../domain/billing/ports.ts'

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

/**
 * The credit ledger in SQL. Plain statements rather than MikroORM because a charge must run on
 * the caller's own connection, inside the transaction that records the call's result; every
 * write first locks the account row (`for update`), which serialises one account's writers while
 * other accounts proceed in parallel.
 *
 * @example
 * const credits = createCreditsRepository(pool)
 * const r = await credits.reserve({ accountId, credits: 40, ref: effectId })
 * await withTransaction(pool, (tx) => credits.settle(r, { credits: 12, ref: effectId, kind: 'model_usage' }, tx))
 */
export function createCreditsRepository(pool: pg.Pool): CreditsRepository {
  /** Runs `fn` in the caller's transaction, or in one of its own. */
  const inTx = <T>(tx: Queryable | undefined, fn: (db: Queryable) => Promise<T>) => (tx ? fn(tx) : withTransaction(pool, fn))

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

  /** Inserts the entry and moves the balance; the caller holds the account lock. */
  async function write(db: Queryable, e: { accountId: string; kind: CreditKind; credits: number; ref: string; balanceAfter: number; reservedAfter: number }) {
    const { rows } = await db.query<EntryRow>(
      `insert into credit_entry (id, account_id, kind, credits, balance_after, ref) values ($1, $2, $3, $4, $5, $6)
       on conflict (kind, ref) do nothing returning ${ENTRY_COLUMNS}`,
      [randomUUID(), e.accountId, e.kind, e.credits, e.balanceAfter, e.ref],
    )
    // Taken by another account's writer meanwhile (refs are meant to be unique): nothing moves.
    if (!rows[0]) return { entry: (await existingEntry(db, e.kind, e.ref))!, created: false }
    await db.query('update account set credits = $2, credits_reserved = $3, updated_at = now() where id = $1', [e.accountId, e.balanceAfter, e.reservedAfter])
    return { entry: entryOf(rows[0]), created: true }
  }

  /** Deletes a reservation and returns what it held (0 when it is gone already). */
  async function dropReservation(db: Queryable, r: CreditReservation) {
    const { rows } = await db.query<{ credits: string }>('delete from credit_reservation where id = $1 and account_id = $2 returning credits', [r.id, r.accountId])
    return rows[0] ? Number(rows[0].credits) : 0
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

    reserve({ accountId, credits, ref }, tx) {
      return inTx(tx, async (db) => {
        const { balance, reserved } = await lockAccount(db, accountId)
        const { rows: held } = await db.query<{ id: string; credits: string }>(
          'select id, credits from credit_reservation where account_id = $1 and ref = $2',
          [accountId, ref],
        )
        if (held[0]) return { id: held[0].id, accountId, credits: Number(held[0].credits), ref }
        if (balance - reserved < credits) throw new InsufficientCreditsError({ available: balance - reserved, required: credits })
        const id = randomUUID()
        await db.query('insert into credit_reservation (id, account_id, credits, ref) values ($1, $2, $3, $4)', [id, accountId, credits, ref])
        await db.query('update account set credits_reserved = credits_reserved + $2 where id = $1', [accountId, credits])
        return { id, accountId, credits, ref }
      })
    },

    settle(reservation, { credits, ref, kind }, tx) {
      return inTx(tx, async (db) => {
        const { balance, reserved } = await lockAccount(db, reservation.accountId)
        const held = await dropReservation(db, reservation)
        const existing = await existingEntry(db, kind, ref)
        if (existing) {
          if (held > 0) await db.query('update account set credits_reserved = credits_reserved - $2 where id = $1', [reservation.accountId, held])
          return { entry: existing, created: false }
        }
        const othersReserved = reserved - held
        // A provider that overran its max tokens is charged what the account can pay, no more.
        const charge = Math.min(credits, balance - othersReserved)
        return write(db, { accountId: reservation.accountId, kind, credits: -charge, ref, balanceAfter: balance - charge, reservedAfter: othersReserved })
      })
    },

    release(reservation, tx) {
      return inTx(tx, async (db) => {
        await lockAccount(db, reservation.accountId)
        const held = await dropReservation(db, reservation)
        if (held > 0) await db.query('update account set credits_reserved = credits_reserved - $2 where id = $1', [reservation.accountId, held])
        return held > 0
      })
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

import type pg from 'pg'
import { QuoteExpiredError, QuoteUsedError } from '../../domain/swaps/errors.ts'
import type { StoredQuote, SwapQuoteStore } from '../../domain/swaps/ports.ts'

/**
 * Quotes in Postgres (a restart or another node can execute one); expired ones are dropped as
 * new ones come.
 *
 * @example
 * const quotes = createSwapQuoteStore(pool)
 * await quotes.save(quoteId, quote)
 */
export function createSwapQuoteStore(pool: pg.Pool): SwapQuoteStore {
  return {
    async save(quoteId, quote) {
      await pool.query(
        `with gone as (delete from swap_quote where expires_at < now() - interval '1 minute')
         insert into swap_quote (id, account_id, data, expires_at) values ($1, $2, $3::jsonb, $4)`,
        [quoteId, quote.accountId, JSON.stringify(quote, (_k, v) => (typeof v === 'bigint' ? v.toString() : v)), new Date(quote.expiresAt)],
      )
    },
    /** The early answer (unknown, expired, or used by another swap); claimQuote decides. */
    async load({ accountId, quoteId, opId }) {
      const { rows } = await pool.query<{ data: StoredQuote & { amountIn: string; minAmountOut: string }; used_by: string | null }>(
        'select data, used_by from swap_quote where id = $1 and account_id = $2 and expires_at > now()',
        [quoteId, accountId],
      )
      const row = rows[0]
      if (!row || row.data.accountId !== accountId) throw new QuoteExpiredError()
      if (row.used_by !== null && row.used_by !== opId) throw new QuoteUsedError({ swapId: row.used_by })
      return { ...row.data, amountIn: BigInt(row.data.amountIn), minAmountOut: BigInt(row.data.minAmountOut) }
    },
  }
}

/**
 * Marks the quote used by swap `opId`, in the transaction that records the swap: of two
 * executes of one quote, however close, exactly one gets the row (the other waits on its lock,
 * then sees it taken: 409 `quote_used`). A retry of the same swap claims it again harmlessly.
 *
 * @example
 * await withTransaction(pool, (db) => claimQuote(db, { quoteId, opId }))
 */
export async function claimQuote(db: Pick<pg.PoolClient, 'query'>, { quoteId, opId }: { quoteId: string; opId: string }): Promise<void> {
  const { rowCount } = await db.query('update swap_quote set used_by = $2 where id = $1 and (used_by is null or used_by = $2)', [quoteId, opId])
  if (rowCount) return
  const { rows } = await db.query<{ used_by: string | null }>('select used_by from swap_quote where id = $1', [quoteId])
  if (!rows[0]) throw new QuoteExpiredError()
  throw new QuoteUsedError({ swapId: rows[0].used_by })
}

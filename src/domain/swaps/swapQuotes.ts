import type pg from 'pg'
import type { Address } from 'viem'
import type { SwapRoute } from '../../chain/swapRoute.ts'
import { ServiceError } from '../errors.ts'

/** How long a quote's `minAmountOut` can be executed with `quoteId`. */
export const QUOTE_TTL_MS = 30_000

/** What a quote fixed: executing with its `quoteId` must ask for the same swap, and keeps its route and minimum. */
export type StoredQuote = {
  accountId: string
  agentId: string
  tokenIn: Address
  nativeIn: boolean
  tokenOut: Address
  nativeOut: boolean
  amountIn: bigint
  slippageBps: number
  route: SwapRoute
  minAmountOut: bigint
  expiresAt: number
}

/** 422 `quote_expired`: the quote is unknown, expired or another account's. */
export class QuoteExpiredError extends ServiceError {
  constructor() {
    super('This quote expired (quotes are valid 30 seconds) or is unknown; ask for a new one.', { code: 'quote_expired', status: 422 })
  }
}

/** 422 `quote_mismatch`: the execute body asks for another swap than the quote. */
export class QuoteMismatchError extends ServiceError {
  constructor() {
    super('This quote was for another agent, pair of tokens, amount or slippage; send the same fields as the quote.', {
      code: 'quote_mismatch',
      status: 422,
    })
  }
}

/** 409 `quote_used`: the quote already executed once (a quote is single-use). */
export class QuoteUsedError extends ServiceError {
  constructor({ swapId }: { swapId: string | null }) {
    super(`This quote was already executed${swapId ? ` (swap ${swapId})` : ''}; a quote executes once. Ask for a new one.`, {
      code: 'quote_used',
      status: 409,
    })
  }
}

/**
 * Stores a quote in Postgres (a restart or another node can execute it); expired ones are
 * dropped as new ones come.
 */
export async function saveQuote(pool: pg.Pool, quoteId: string, quote: StoredQuote): Promise<void> {
  await pool.query(
    `with gone as (delete from swap_quote where expires_at < now() - interval '1 minute')
     insert into swap_quote (id, account_id, data, expires_at) values ($1, $2, $3::jsonb, $4)`,
    [quoteId, quote.accountId, JSON.stringify(quote, (_k, v) => (typeof v === 'bigint' ? v.toString() : v)), new Date(quote.expiresAt)],
  )
}

/**
 * The quote of the account that `quoteId` names. Refused when unknown or expired (422), or when
 * a swap other than `opId` (a retry of the same request has the same id) already used it (409).
 * This is the early answer; claimQuote decides.
 */
export async function loadQuote(pool: pg.Pool, { accountId, quoteId, opId }: { accountId: string; quoteId: string; opId: string }): Promise<StoredQuote> {
  const { rows } = await pool.query<{ data: StoredQuote & { amountIn: string; minAmountOut: string }; used_by: string | null }>(
    'select data, used_by from swap_quote where id = $1 and account_id = $2 and expires_at > now()',
    [quoteId, accountId],
  )
  const row = rows[0]
  if (!row || row.data.accountId !== accountId) throw new QuoteExpiredError()
  if (row.used_by !== null && row.used_by !== opId) throw new QuoteUsedError({ swapId: row.used_by })
  return { ...row.data, amountIn: BigInt(row.data.amountIn), minAmountOut: BigInt(row.data.minAmountOut) }
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

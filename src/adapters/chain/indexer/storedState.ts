import type { IndexerContext } from './indexerContext.ts'
import type { CurveReserves, TokenInfo } from './indexedRows.ts'
import { referenceTokens } from './referenceTokens.ts'

/** Tokens the indexer has seen on chain so far, and the deployment's reference pools, by address. */
export async function knownTokens(ctx: IndexerContext): Promise<Map<string, TokenInfo>> {
  const { pool, chainId } = ctx
  const { rows } = await pool.query<{
    address: string; venue: TokenInfo['venue']; quote_address: string; pool_address: string | null
    pool_token_is_token0: boolean | null; pool_virtual_token: string | null; pool_virtual_quote: string | null
  }>(
    `select address, venue, quote_address, pool_address, pool_token_is_token0, pool_virtual_token, pool_virtual_quote
       from token where chain_id = $1 and indexed_block is not null`,
    [chainId],
  )
  const known = new Map(rows.map((r): [string, TokenInfo] => [r.address, {
    address: r.address,
    venue: r.venue,
    quoteAddress: r.quote_address,
    pool: r.pool_address,
    tokenIsToken0: r.pool_token_is_token0,
    virtualToken: BigInt(r.pool_virtual_token ?? 0),
    virtualQuote: BigInt(r.pool_virtual_quote ?? 0),
  }]))
  for (const t of await referenceTokens(ctx)) if (!known.has(t.address)) known.set(t.address, t)
  return known
}

/** The curve reserves after the last indexed trade of each token. */
export async function latestCurveState({ pool, chainId }: IndexerContext, addresses: string[]): Promise<Map<string, CurveReserves>> {
  const { rows } = await pool.query<{ token_address: string; token_reserve: string; quote_reserve: string }>(
    `select distinct on (token_address) token_address, token_reserve, quote_reserve from token_snapshot
      where chain_id = $1 and source = 'curve' and token_address = any($2)
      order by token_address, block_number desc, log_index desc`,
    [chainId, addresses],
  )
  return new Map(rows.map((r) => [r.token_address, { tokenReserve: BigInt(r.token_reserve), quoteReserve: BigInt(r.quote_reserve) }]))
}

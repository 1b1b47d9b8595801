import type pg from 'pg'

type Db = Pick<pg.Pool, 'query'>

/** The launched tokens (`token`): their lookups by address or symbol, and a launch's record. */

/** A launched token's row as the token lookup reads it. */
export type TokenRow = { address: string; symbol: string; verified: boolean; venue: string; pool_address: string | null; quote_symbol: string }

/**
 * The launched tokens of a chain named by `ref`: by (lowercase) address, else by lowercase
 * symbol (verified ones only when `verifiedOnly`). At most two rows (more than one symbol match is ambiguous).
 */
export async function findTokens(
  db: Db,
  chainId: number,
  ref: { address: string } | { symbol: string; verifiedOnly: boolean },
): Promise<TokenRow[]> {
  const byAddress = 'address' in ref
  const { rows } = await db.query<TokenRow>(
    `select address, symbol, verified, venue, pool_address, quote_symbol from token
      where chain_id = $2 and ${byAddress ? 'address = $1' : `lower(symbol) = $1${ref.verifiedOnly ? ' and verified' : ''}`} limit 2`,
    [byAddress ? ref.address : ref.symbol, chainId],
  )
  return rows
}

/** True when a verified launched token of a chain has this lowercase symbol. */
export async function hasVerifiedTokenSymbol(db: Db, chainId: number, symbol: string): Promise<boolean> {
  const { rows } = await db.query('select 1 from token where chain_id = $1 and lower(symbol) = $2 and verified limit 1', [chainId, symbol])
  return rows.length > 0
}

/** A confirmed launch's token (addresses lowercase). */
export type LaunchedToken = {
  address: string
  chainId: number
  symbol: string
  name: string
  venue: string
  quoteSymbol: string
  quoteAddress: string
  creatorAddress: string
  creatorAgentId: string
  launchId: string
  poolAddress: string | null
  totalSupply: string
  description: string | null | undefined
  logoUrl: string | null | undefined
  blockNumber: string
  txHash: string
}

/**
 * Records a confirmed launch's token. A token already known at that address (seen by the
 * indexer first) gets the launch's id, creator, description and logo, and keeps its pool.
 */
export async function upsertLaunchedToken(db: Db, t: LaunchedToken): Promise<void> {
  await db.query(
    `insert into token (address, chain_id, symbol, name, venue, quote_symbol, quote_address, creator_address, creator_agent_id,
       launch_id, pool_address, total_supply, description, logo_url, block_number, tx_hash)
     values ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16)
     on conflict (address) do update set launch_id = excluded.launch_id, creator_agent_id = excluded.creator_agent_id,
       description = excluded.description, logo_url = excluded.logo_url, pool_address = coalesce(token.pool_address, excluded.pool_address)`,
    [t.address, t.chainId, t.symbol, t.name, t.venue, t.quoteSymbol, t.quoteAddress, t.creatorAddress, t.creatorAgentId, t.launchId,
      t.poolAddress, t.totalSupply, t.description, t.logoUrl, t.blockNumber, t.txHash],
  )
}

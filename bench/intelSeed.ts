import type pg from 'pg'

/**
 * Seeds what the indexer would have written for `tokens` launched tokens (USDC-quoted, with
 * pools) and `swaps` trades spread evenly over the last 24 h, each with its pool snapshot, with
 * generate_series (bench/intel.ts). Returns the milliseconds it took.
 */
const addr = (n: number | string, width = 40) => `'0x' || lpad(to_hex(${n}), ${width}, '0')`

export async function seed(pool: pg.Pool, chainId: number, { tokens: TOKENS, swaps: SWAPS }: { tokens: number; swaps: number }) {
  const t0 = performance.now()
  await pool.query(
    `insert into token (address, chain_id, symbol, name, venue, quote_symbol, quote_address, creator_address, pool_address, total_supply,
       block_number, tx_hash, created_at, indexed_block, verified)
     select ${addr('g')}, $1, 'B' || g, 'Bench ' || g, 'venue-b', 'USDC', ${addr(1)}, ${addr(2)}, ${addr('g + 10000000')}, 1e27,
            1000000 + g, ${addr('g', 64)}, now() - interval '2 days', 1000000 + g, g % 2 = 0
       from generate_series(1, $2::int) g`,
    [chainId, TOKENS],
  )
  // Trade g of token (g % TOKENS) + 1, spread evenly over the last 24 h; prices wander per token.
  await pool.query(
    `insert into trade (chain_id, tx_hash, log_index, token_address, venue, trader, side, quote_amount, token_amount, ours, block_number, at,
       source, fee_asset, price_after, quote_usd)
     select $1, ${addr('g', 64)}, 0, ${addr(`(g % ${TOKENS}) + 1`)}, 'venue-b', ${addr(3)}, case when g % 3 = 0 then 'sell' else 'buy' end,
            1000000 + (g % 97) * 10000, 1e20, false, 2000000 + g, now() - (($2::int - g) * (86400000.0 / $2::int)) * interval '1 millisecond',
            'pool', 'quote', 15000000000000000000000 + ((g * 7919) % 113) * 100000000000000000000, 1e18
       from generate_series(1, $2::int) g`,
    [chainId, SWAPS],
  )
  await pool.query(
    `insert into token_snapshot (chain_id, token_address, block_number, log_index, source, token_reserve, quote_reserve, price)
     select chain_id, token_address, block_number, 1, 'pool', 1e26, 5e10, price_after from trade where chain_id = $1`,
    [chainId],
  )
  // As autovacuum would have left them: statistics, and a visibility map for index-only scans.
  for (const table of ['token', 'trade', 'token_snapshot']) await pool.query(`vacuum analyze ${table}`)
  return performance.now() - t0
}


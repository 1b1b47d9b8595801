import type pg from 'pg'
import type { AnomalyRow, IntelStore, MacroRow, MoverRow, PoolRow } from '../../domain/intel/ports.ts'
import type { Bucket } from '../../domain/intel/candleRules.ts'
import type { TokenRow } from '../../domain/tokens/ports.ts'
import type { ReferenceAsset } from '../../domain/intel/intelTokens.ts'
import { withTransaction } from './transaction.ts'

/*
 * Market intelligence read from the indexer's tables in raw SQL (trade, token_snapshot,
 * market_anomaly). Candles are aggregated on read from `trade` over the index trade_token_at
 * (token_address, at) rather than kept in a candle table the indexer maintains: a reorg's
 * rewind deletes trades and every candle follows, with nothing else to undo, and the read is one
 * index range scan per token and range (bench/intel.ts measures it; docs/benchmarks.md).
 */

const big = (v: string | null | undefined) => (v == null ? null : BigInt(v))

/** Reference assets (intel/intelTokens.ts) as column arrays for `unnest`: address, symbol, name, quote, pool. */
const referenceColumns = (reference: readonly ReferenceAsset[]) =>
  [reference.map((a) => a.address), reference.map((a) => a.symbol), reference.map((a) => a.name), reference.map((a) => a.quoteSymbol), reference.map((a) => a.pool)]

/**
 * @example
 * const intel = createMarketIntelStore(pool)
 * const { buckets, prev } = await intel.candles({ token, interval: 60, from, to, quoteDecimals: 6 })
 */
export function createMarketIntelStore(pool: pg.Pool): IntelStore {
  return {
    async findToken(chainId, mint) {
      const byAddress = /^0x[0-9a-fA-F]{40}$/.test(mint)
      const { rows } = await pool.query<TokenRow>(
        `select t.*, a.name as agent_name from token t left join agent a on a.id = t.creator_agent_id
          where ${byAddress ? 't.address = lower($1)' : 't.verified and upper(t.symbol) = upper($1)'} ${chainId === undefined ? '' : 'and t.chain_id = $2'}
          order by t.block_number limit 1`,
        chainId === undefined ? [mint] : [mint, chainId],
      )
      return rows[0]
    },

    candles: (q) => readCandles(pool, q),

    async lastTradeAt(token) {
      const { rows } = await pool.query<{ at: string | Date | null }>(`select max(at) as at from trade where token_address = $1`, [token])
      return rows[0]?.at ? new Date(rows[0].at) : null
    },

    movers: (q) => readMovers(pool, q),

    async anomalies({ chainId, since, types, limit }) {
      const { rows } = await pool.query<{ type: string; mints: string[]; description: string; severity: number; detected_at: string | Date; block_number: string; details: Record<string, unknown> }>(
        `select type, mints, description, severity, detected_at, block_number, details from market_anomaly
          where ($1::int is null or chain_id = $1) and detected_at >= $2 and ($3::text[] is null or type = any($3))
          order by detected_at desc, block_number desc, key limit $4`,
        [chainId ?? null, since, types ?? null, limit],
      )
      return rows.map((r): AnomalyRow => ({
        type: r.type, mints: r.mints, description: r.description, severity: r.severity, detectedAt: new Date(r.detected_at), blockNumber: Number(r.block_number), details: r.details,
      }))
    },

    async pools({ chainId, reference }) {
      const r = referenceColumns(reference)
      const { rows } = await pool.query<Record<string, string | boolean>>(
        `with a as (
           select t.address, t.chain_id, t.symbol, t.pool_address, t.quote_symbol, t.verified from token t
            where t.pool_address is not null and ($1::int is null or t.chain_id = $1)
           union all
           select x.address, $1::int, x.symbol, x.pool, x.quote, true from unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[]) as x(address, symbol, name, quote, pool))
         select t.address, t.symbol, t.pool_address, t.quote_symbol, t.verified, s.price::text, s.token_reserve::text, s.quote_reserve::text,
                (select coalesce(sum(tr.quote_amount), 0) from trade tr where tr.token_address = t.address and tr.source = 'pool'
                   and tr.at > now() - interval '24 hours')::text as volume,
                (select coalesce(sum(tr.creator_fee), 0) from trade tr where tr.token_address = t.address and tr.source = 'pool' and tr.fee_asset = 'quote'
                   and tr.at > now() - interval '24 hours')::text as creator_fees
           from a t
           join lateral (select x.price, x.token_reserve, x.quote_reserve, x.source from token_snapshot x where x.chain_id = t.chain_id and x.token_address = t.address
                          order by x.block_number desc, x.log_index desc limit 1) s on s.source = 'pool'`,
        [chainId ?? null, ...r],
      )
      return rows.map((r): PoolRow => ({
        token: r.address as string, symbol: r.symbol as string, pool: r.pool_address as string, quoteSymbol: r.quote_symbol as string, verified: r.verified as boolean,
        price: BigInt(r.price as string), tokenReserve: BigInt(r.token_reserve as string), quoteReserve: BigInt(r.quote_reserve as string),
        volume24h: BigInt(r.volume as string), creatorFees24h: BigInt(r.creator_fees as string),
      }))
    },

    async macro({ chainId }): Promise<MacroRow> {
      const { rows } = await pool.query<{ quote_symbol: string; side: 'buy' | 'sell'; volume: string; usd: string | null; trades: string; last: string | Date }>(
        `select t.quote_symbol, tr.side, sum(tr.quote_amount)::text as volume,
                case when bool_and(tr.quote_usd is not null) then trunc(sum(tr.quote_amount * tr.quote_usd))::text end as usd,
                count(*)::text as trades, max(tr.at) as last
           from trade tr join token t on t.address = tr.token_address
          where ($1::int is null or tr.chain_id = $1) and tr.at > now() - interval '24 hours'
          group by 1, 2`,
        [chainId ?? null],
      )
      return {
        flows: rows.map((r) => ({ quoteSymbol: r.quote_symbol, side: r.side, volume: BigInt(r.volume), usdTimesUnits: big(r.usd), trades: Number(r.trades) })),
        updatedAt: rows.reduce<Date | null>((m, r) => (m === null || new Date(r.last) > m ? new Date(r.last) : m), null),
      }
    },
  }
}

/** Buckets of a token's trades with their OHLC in quote and in USD, and the last trade before them. */
async function readCandles(pool: pg.Pool, { token, interval, from, to, quoteDecimals }: Parameters<IntelStore['candles']>[0]) {
  const priceScale = (10n ** BigInt(18 + quoteDecimals)).toString()
  const amountScale = (10n ** BigInt(quoteDecimals)).toString()
  const [buckets, prev] = await Promise.all([
    pool.query<Record<string, string | null>>(
      `with tr as (
         select extract(epoch from at)::bigint as s, block_number, log_index, price_after as p,
                trunc(price_after * quote_usd / $5::numeric) as pu, quote_usd, quote_amount, token_amount,
                quote_amount * quote_usd / $6::numeric as vu
           from trade where token_address = $1 and at >= $2 and at < $3 and price_after is not null)
       select (floor(s / $4::numeric) * $4)::bigint::text as t,
              (array_agg(p order by block_number, log_index))[1]::text as open, max(p)::text as high, min(p)::text as low,
              (array_agg(p order by block_number desc, log_index desc))[1]::text as close,
              (array_agg(pu order by block_number, log_index))[1]::text as open_usd, max(pu)::text as high_usd, min(pu)::text as low_usd,
              (array_agg(pu order by block_number desc, log_index desc))[1]::text as close_usd,
              sum(token_amount)::text as vt, sum(quote_amount)::text as vq, trunc(sum(vu))::text as vu,
              count(*)::text as n, bool_and(quote_usd is not null)::text as all_usd
         from tr group by 1 order by 1`,
      [token, from, to, interval, priceScale, amountScale],
    ),
    pool.query<{ p: string; pu: string | null }>(
      `select price_after::text as p, trunc(price_after * quote_usd / $3::numeric)::text as pu from trade
        where token_address = $1 and at < $2 and price_after is not null order by at desc, block_number desc, log_index desc limit 1`,
      [token, from, priceScale],
    ),
  ])
  return {
    buckets: buckets.rows.map((r): Bucket => {
      const usd = r.all_usd === 'true'
      return {
        t: Number(r.t), open: BigInt(r.open!), high: BigInt(r.high!), low: BigInt(r.low!), close: BigInt(r.close!),
        openUsd: usd ? big(r.open_usd) : null, highUsd: usd ? big(r.high_usd) : null, lowUsd: usd ? big(r.low_usd) : null, closeUsd: usd ? big(r.close_usd) : null,
        volumeToken: BigInt(r.vt!), volumeQuote: BigInt(r.vq!), volumeUsd: usd ? big(r.vu) : null, trades: Number(r.n),
      }
    }),
    prev: prev.rows[0] ? { close: BigInt(prev.rows[0].p), closeUsd: big(prev.rows[0].pu) } : null,
  }
}

/**
 * Every launched token's and reference asset's latest price and reserve, its price at the
 * window's start, and its volume in the window.
 */
async function readMovers(pool: pg.Pool, { chainId, windowSeconds, reference }: Parameters<IntelStore['movers']>[0]): Promise<MoverRow[]> {
  // JIT compiles this statement (estimated over its cost threshold) for ~35 ms of a ~60 ms run: off.
  const rows = await withTransaction(pool, async (db) => {
    await db.query('set local jit = off')
    return (await db.query<Record<string, string | boolean | null>>(
        `with a as (
           select t.address, t.chain_id, t.symbol, t.name, t.quote_symbol, t.verified, t.total_supply from token t where ($1::int is null or t.chain_id = $1)
           union all
           select x.address, $1::int, x.symbol, x.name, x.quote, true, null::numeric
             from unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::text[]) as x(address, symbol, name, quote, pool))
         select t.address, t.symbol, t.name, t.quote_symbol, t.verified, t.total_supply::text,
                s.price::text, s.quote_reserve::text,
                coalesce(
                  (select tr.price_after from trade tr where tr.token_address = t.address and tr.price_after is not null
                      and tr.at <= now() - make_interval(secs => $2) order by tr.at desc limit 1),
                  (select f.price from token_snapshot f where f.chain_id = t.chain_id and f.token_address = t.address
                    order by f.block_number, f.log_index limit 1))::text as price_then,
                v.volume::text, v.trades::text
           from a t
           left join lateral (select x.price, x.quote_reserve from token_snapshot x where x.chain_id = t.chain_id and x.token_address = t.address
                               order by x.block_number desc, x.log_index desc limit 1) s on true
           cross join lateral (select coalesce(sum(tr.quote_amount), 0) as volume, count(*) as trades from trade tr
                                where tr.token_address = t.address and tr.at > now() - make_interval(secs => $2)) v`,
        [chainId ?? null, windowSeconds, ...referenceColumns(reference)],
    )).rows
  })
  return rows.map((r): MoverRow => ({
    address: r.address as string, symbol: r.symbol as string, name: r.name as string, quoteSymbol: r.quote_symbol as string,
    verified: r.verified as boolean, totalSupply: big(r.total_supply as string | null), price: big(r.price as string | null),
    quoteReserve: big(r.quote_reserve as string | null), priceThen: big(r.price_then as string | null),
    volume: BigInt(r.volume as string), trades: Number(r.trades),
  }))
}

import type pg from 'pg'
import { formatUnits } from 'viem'
import {
  largeTransfers, liquidityMoves, volumeSpikes, whaleSwaps, VOLUME_WINDOW,
  type Anomaly, type BlockVolume, type ReservePoint,
} from '../../../domain/intel/anomalyRules.ts'
import type { IndexerContext } from './indexerContext.ts'
import type { DepositRow } from './deposits.ts'
import type { SnapshotRow, TokenInfo, TradeRow } from './indexedRows.ts'
import type { QuoteUsdAt } from './quoteUsd.ts'

/*
 * Anomaly detection in the transaction that writes a block range (src/domain/intel/anomalyRules.ts
 * has the rules): what it needs from before the range is two reads (each pool's last snapshot,
 * each traded token's trailing block volumes), and the anomalies go in as one statement. A reorg
 * deletes them with the range (indexer/reorg.ts), so they are fresh within one block and never
 * outlive the swap that caused them.
 */

export type AnomalyInput = {
  from: number
  trades: TradeRow[]
  snapshots: SnapshotRow[]
  deposits: DepositRow[]
  tokens: Map<string, TokenInfo>
  quoteUsdAt: QuoteUsdAt
  at: (block: number) => Date
}

const toUsd = (amount: bigint, decimals: number | undefined, usd18: bigint | null | undefined) =>
  decimals === undefined || usd18 == null ? null : Number(formatUnits(amount * usd18, decimals + 18))

/**
 * Detects and writes the anomalies of one range, on the range's transaction; returns how many.
 *
 * @example
 * await writeAnomalies(ctx, db, { from, trades, snapshots, deposits, tokens, quoteUsdAt, at })
 */
export async function writeAnomalies(ctx: IndexerContext, db: pg.PoolClient, r: AnomalyInput): Promise<number> {
  if (r.trades.length === 0 && r.snapshots.length === 0 && r.deposits.length === 0) return 0
  const traded = [...new Set([...r.trades.map((t) => t.token), ...r.snapshots.map((s) => s.token)])]
  const { rows: named } = await db.query<{ address: string; symbol: string }>(`select address, symbol from token where address = any($1)`, [traded])
  const symbol = new Map([...ctx.referencePools.map((p) => [p.token, p.symbol] as const), ...named.map((n) => [n.address, n.symbol] as const)])
  const sym = (t: string) => symbol.get(t) ?? t
  const quoteOf = (token: string) => ctx.quoteSymbols.get(r.tokens.get(token)?.quoteAddress ?? '')

  const whales = whaleSwaps(r.trades.map((t) => ({
    txHash: t.txHash, logIndex: t.logIndex, blockNumber: t.blockNumber, token: t.token, symbol: sym(t.token), side: t.side, trader: t.trader,
    usd: toUsd(t.quoteAmount, ctx.quoteDecimals.get(quoteOf(t.token) ?? ''), t.quoteUsd18),
  })))
  const liquidity = liquidityMoves(await poolPointsBefore(ctx, db, r), poolPoints(r, sym))
  const volumes = volumeSpikes(await trailingVolumes(db, r), blockVolumes(r.trades, sym))
  const transfers = largeTransfers(r.deposits.map((d) => ({
    txHash: d.txHash, logIndex: d.logIndex, blockNumber: Number(d.blockNumber), asset: d.asset, to: d.address,
    usd: toUsd(d.amount, ctx.quoteDecimals.get(d.asset), r.quoteUsdAt(d.asset, Number(d.blockNumber))),
  })))
  const all: Anomaly[] = [...whales, ...liquidity, ...volumes, ...transfers]
  if (all.length === 0) return 0
  const col = <T,>(f: (a: Anomaly) => T) => all.map(f)
  await db.query(
    `insert into market_anomaly (chain_id, block_number, key, type, mints, description, severity, details, detected_at)
     select $1::int, b, k, ty, array(select jsonb_array_elements_text(m)), d, s, de, at
       from unnest($2::bigint[], $3::text[], $4::text[], $5::jsonb[], $6::text[], $7::real[], $8::jsonb[], $9::timestamptz[]) as x(b, k, ty, m, d, s, de, at)
     on conflict do nothing`,
    [ctx.chainId, col((a) => a.blockNumber), col((a) => a.key), col((a) => a.type), col((a) => JSON.stringify(a.mints)),
      col((a) => a.description), col((a) => a.severity), col((a) => JSON.stringify(a.details)), col((a) => r.at(a.blockNumber))],
  )
  return all.length
}

/** Real reserves of each curve or pool snapshot of the range, in chain order. */
function poolPoints(r: AnomalyInput, sym: (t: string) => string): ReservePoint[] {
  return r.snapshots.map((s) => ({ token: s.token, symbol: sym(s.token), source: s.source, blockNumber: s.blockNumber, tokenReserve: s.tokenReserve, quoteReserve: s.quoteReserve }))
}

/** Each token's last snapshot before the range. */
async function poolPointsBefore(ctx: IndexerContext, db: pg.PoolClient, r: AnomalyInput): Promise<Map<string, ReservePoint>> {
  const pools = [...new Set(r.snapshots.map((s) => s.token))]
  if (pools.length === 0) return new Map()
  const { rows } = await db.query<{ token_address: string; source: string; token_reserve: string; quote_reserve: string; block_number: string }>(
    `select distinct on (token_address) token_address, source, token_reserve, quote_reserve, block_number from token_snapshot
      where chain_id = $1 and token_address = any($2) and block_number < $3
      order by token_address, block_number desc, log_index desc`,
    [ctx.chainId, pools, r.from],
  )
  const out = new Map<string, ReservePoint>()
  for (const row of rows) {
    out.set(row.token_address, {
      token: row.token_address, symbol: '', source: row.source, blockNumber: Number(row.block_number),
      tokenReserve: BigInt(row.token_reserve), quoteReserve: BigInt(row.quote_reserve),
    })
  }
  return out
}

function blockVolumes(trades: TradeRow[], sym: (t: string) => string): BlockVolume[] {
  const by = new Map<string, BlockVolume>()
  for (const t of trades) {
    const k = `${t.token}:${t.blockNumber}`
    const v = by.get(k) ?? { token: t.token, symbol: sym(t.token), blockNumber: t.blockNumber, volume: 0n }
    v.volume += t.quoteAmount
    by.set(k, v)
  }
  return [...by.values()].sort((a, b) => a.blockNumber - b.blockNumber)
}

/** Each traded token's volumes of its last VOLUME_WINDOW blocks with trades before the range, newest first. */
async function trailingVolumes(db: pg.PoolClient, r: AnomalyInput): Promise<Map<string, bigint[]>> {
  const tokens = [...new Set(r.trades.map((t) => t.token))]
  if (tokens.length === 0) return new Map()
  const { rows } = await db.query<{ token: string; vols: string[] }>(
    `select x.token, array(select v.vol::text from (
        select sum(quote_amount) as vol, block_number from trade where token_address = x.token and block_number < $2
         group by block_number order by block_number desc limit $3) v order by v.block_number desc) as vols
       from unnest($1::text[]) as x(token)`,
    [tokens, r.from, VOLUME_WINDOW],
  )
  return new Map(rows.map((row) => [row.token, row.vols.map((v) => BigInt(v))]))
}

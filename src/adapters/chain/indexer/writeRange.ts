import type pg from 'pg'
import { withTransaction } from '../../db/transaction.ts'
import type { IndexerContext } from './indexerContext.ts'
import { CheckpointMovedError } from './indexerErrors.ts'
import { writeDeposits, type DepositRow } from './deposits.ts'
import { writeTransfersIn, type TransferInRow } from './agentTransfers.ts'
import type { FeeRow, Graduation, Header, NewToken, SnapshotRow, TokenInfo, TradeRow } from './indexedRows.ts'
import { writeAnomalies } from './anomalies.ts'
import type { QuoteUsdAt } from './quoteUsd.ts'

/** Everything decoded from one block range, ready to write. */
export type RangeRows = {
  from: number
  to: number
  newTokens: Map<string, NewToken>
  graduations: Graduation[]
  tokens: Map<string, TokenInfo>
  trades: TradeRow[]
  snapshots: SnapshotRow[]
  fees: FeeRow[]
  /** Transfers to deposit addresses, written `pending`. */
  deposits: DepositRow[]
  /** Transfers into agent wallets, with their USD value at their block. */
  transfersIn: TransferInRow[]
  headers: Map<number, Header>
  /** Headers from here up are kept for reorg checks. */
  tailFrom: number
  /** Quote asset USD prices at the range's blocks (indexer/quoteUsd.ts), for anomalies. */
  quoteUsdAt: QuoteUsdAt
}

/*
 * Raw SQL, not MikroORM: a range can carry thousands of trades, snapshots and fee events, and
 * each kind goes in as one `insert ... select from unnest(<one array per column>)`. Measured
 * here (`node bench/indexerWrites.ts`, 2,000 trade rows in one transaction, median of 5):
 * unnest 9.3k rows/s; MikroORM `create` + `flush` 3.1k/s (and it cannot say `on conflict do
 * nothing`); `upsertMany` with `onConflictAction: 'ignore'` 0.3k/s; one raw insert per row
 * 1.2k/s. Tokens, graduations and block hashes are few per range and stay one statement each.
 */

/**
 * Writes a decoded range in one database transaction: tokens, graduations, trades, reserve
 * snapshots, creator fee events, deposits, transfers into agent wallets, the recent block hashes and the checkpoint. Throws
 * CheckpointMovedError when another indexer wrote this range first.
 */
export async function writeRange(ctx: IndexerContext, r: RangeRows): Promise<void> {
  const { chainId } = ctx
  const timestamps = new Map([...r.headers.values()].map((h) => [h.number, new Date(Number(h.timestamp) * 1000)]))
  const at = (block: number) => timestamps.get(block) ?? new Date()
  await withTransaction(ctx.pool, async (db) => {
    const { rows: cp } = await db.query<{ block_number: string }>(`select block_number from chain_checkpoint where chain_id = $1 for update`, [chainId])
    if (Number(cp[0]!.block_number) !== r.from - 1) throw new CheckpointMovedError(`checkpoint is ${cp[0]!.block_number}, not ${r.from - 1}`)
    const wallets = [...new Set([...[...r.newTokens.values()].map((t) => t.creator), ...r.trades.map((t) => t.trader)])]
    const { rows: agents } = await db.query<{ id: string; wallet_address: string }>(`select id, wallet_address from agent where wallet_address = any($1)`, [wallets])
    const agentOf = new Map(agents.map((a) => [a.wallet_address, a.id]))
    await writeTokens(ctx, db, r.newTokens, agentOf, at)
    await writeGraduations(db, r.graduations, r.tokens)
    await writeTrades(ctx, db, r.trades, agentOf, at)
    await writeSnapshotsAndFees(ctx, db, r.snapshots, r.fees)
    await writeDeposits(ctx, db, r.deposits)
    await writeTransfersIn(ctx, db, r.transfersIn, at)
    await writeAnomalies(ctx, db, { ...r, at })
    for (const h of r.headers.values()) {
      if (h.number < r.tailFrom) continue
      await db.query(`insert into chain_block (chain_id, number, hash) values ($1,$2,$3) on conflict (chain_id, number) do update set hash = excluded.hash`, [
        chainId, h.number, h.hash,
      ])
    }
    await db.query(`delete from chain_block where chain_id = $1 and number <= $2`, [chainId, r.to - ctx.reorgDepth])
    await db.query(`update chain_checkpoint set block_number = $2 where chain_id = $1`, [chainId, r.to])
  })
}

/** New tokens; a row our own launch wrote keeps its agent and metadata. */
async function writeTokens(ctx: IndexerContext, db: pg.PoolClient, newTokens: Map<string, NewToken>, agentOf: Map<string, string>, at: (block: number) => Date) {
  for (const t of newTokens.values()) {
    await db.query(
      `insert into token (address, chain_id, symbol, name, venue, quote_symbol, quote_address, creator_address, creator_agent_id,
         pool_address, verified, total_supply, block_number, tx_hash, created_at, indexed_block, curve_virtual_quote,
         graduation_threshold, pool_token_is_token0, pool_virtual_token, pool_virtual_quote)
       values ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$13,$16,$17,$18,$19,$20)
       on conflict (address) do update set
         symbol = excluded.symbol, name = excluded.name, venue = excluded.venue, quote_symbol = excluded.quote_symbol,
         quote_address = excluded.quote_address, creator_address = excluded.creator_address,
         creator_agent_id = coalesce(token.creator_agent_id, excluded.creator_agent_id),
         pool_address = coalesce(excluded.pool_address, token.pool_address),
         total_supply = excluded.total_supply, block_number = excluded.block_number, tx_hash = excluded.tx_hash,
         indexed_block = excluded.indexed_block, curve_virtual_quote = excluded.curve_virtual_quote,
         graduation_threshold = excluded.graduation_threshold, pool_token_is_token0 = excluded.pool_token_is_token0,
         pool_virtual_token = excluded.pool_virtual_token, pool_virtual_quote = excluded.pool_virtual_quote`,
      [t.address, ctx.chainId, t.symbol, t.name, t.venue, t.quoteSymbol, t.quoteAddress, t.creator, agentOf.get(t.creator) ?? null,
        t.poolAddress, t.verified, t.totalSupply.toString(), t.blockNumber, t.txHash, at(t.blockNumber),
        t.curveVirtualQuote?.toString() ?? null, t.graduationThreshold?.toString() ?? null, t.poolTokenIsToken0,
        t.poolVirtualToken?.toString() ?? null, t.poolVirtualQuote?.toString() ?? null],
    )
  }
}

async function writeGraduations(db: pg.PoolClient, graduations: Graduation[], tokens: Map<string, TokenInfo>) {
  for (const g of graduations) {
    const t = tokens.get(g.token)
    if (!t) continue
    await db.query(
      `update token set graduated = true, graduated_block = $2, pool_address = $3, pool_token_is_token0 = $4,
              pool_virtual_token = $5, pool_virtual_quote = $6
        where address = $1`,
      [g.token, g.blockNumber, g.pair, t.tokenIsToken0, t.virtualToken.toString(), t.virtualQuote.toString()],
    )
  }
}

/** Trades, one statement; `ours` = the trader is one of our agents' wallets. */
async function writeTrades(ctx: IndexerContext, db: pg.PoolClient, trades: TradeRow[], agentOf: Map<string, string>, at: (block: number) => Date) {
  if (trades.length === 0) return
  const col = <T,>(f: (t: TradeRow) => T) => trades.map(f)
  await db.query(
    `insert into trade (chain_id, tx_hash, log_index, token_address, venue, trader, side, quote_amount, token_amount, creator_fee,
       platform_fee, ours, block_number, at, source, fee_asset, price_after, quote_usd)
     select $1::int, * from unnest($2::text[], $3::int[], $4::text[], $5::text[], $6::text[], $7::text[], $8::numeric[], $9::numeric[],
       $10::numeric[], $11::numeric[], $12::bool[], $13::bigint[], $14::timestamptz[], $15::text[], $16::text[], $17::numeric[], $18::numeric[])
     on conflict (chain_id, tx_hash, log_index) do nothing`,
    [ctx.chainId, col((t) => t.txHash), col((t) => t.logIndex), col((t) => t.token), col((t) => t.venue), col((t) => t.trader),
      col((t) => t.side), col((t) => t.quoteAmount.toString()), col((t) => t.tokenAmount.toString()), col((t) => t.creatorFee.toString()),
      col((t) => t.platformFee.toString()), col((t) => agentOf.has(t.trader)), col((t) => t.blockNumber), col((t) => at(t.blockNumber)),
      col((t) => t.source), col((t) => t.feeAsset), col((t) => t.priceAfter?.toString() ?? null), col((t) => t.quoteUsd18?.toString() ?? null)],
  )
}

/** Reserve snapshots and creator fee events, one statement each. */
async function writeSnapshotsAndFees(ctx: IndexerContext, db: pg.PoolClient, snapshots: SnapshotRow[], fees: FeeRow[]) {
  if (snapshots.length > 0) {
    const col = <T,>(f: (s: SnapshotRow) => T) => snapshots.map(f)
    await db.query(
      `insert into token_snapshot (chain_id, token_address, block_number, log_index, source, token_reserve, quote_reserve, price)
       select $1::int, * from unnest($2::text[], $3::bigint[], $4::int[], $5::text[], $6::numeric[], $7::numeric[], $8::numeric[])
       on conflict do nothing`,
      [ctx.chainId, col((s) => s.token), col((s) => s.blockNumber), col((s) => s.logIndex), col((s) => s.source),
        col((s) => s.tokenReserve.toString()), col((s) => s.quoteReserve.toString()), col((s) => s.price.toString())],
    )
  }
  if (fees.length > 0) {
    const col = <T,>(f: (e: FeeRow) => T) => fees.map(f)
    await db.query(
      `insert into creator_fee_event (chain_id, tx_hash, log_index, token_address, kind, quote_amount, token_amount, block_number)
       select $1::int, * from unnest($2::text[], $3::int[], $4::text[], $5::text[], $6::numeric[], $7::numeric[], $8::bigint[])
       on conflict do nothing`,
      [ctx.chainId, col((f) => f.txHash), col((f) => f.logIndex), col((f) => f.token), col((f) => f.kind),
        col((f) => f.quote.toString()), col((f) => f.tokenAmount.toString()), col((f) => f.blockNumber)],
    )
  }
}

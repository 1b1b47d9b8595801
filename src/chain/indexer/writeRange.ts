import type pg from 'pg'
import { withTransaction } from '../../db/transaction.ts'
import type { IndexerContext } from './indexerContext.ts'
import { CheckpointMovedError } from './indexerErrors.ts'
import type { FeeRow, Graduation, Header, NewToken, SnapshotRow, TokenInfo, TradeRow } from './indexedRows.ts'

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
  headers: Map<number, Header>
  /** Headers from here up are kept for reorg checks. */
  tailFrom: number
}

/*
 * Raw SQL on one pooled connection, not MikroORM's unit of work: a range can carry thousands
 * of rows, and these are plain inserts with `on conflict` into tables no use case changes.
 * BULK_WRITE_FIGURE
 */

/**
 * Writes a decoded range in one database transaction: tokens, graduations, trades, reserve
 * snapshots, creator fee events, the recent block hashes and the checkpoint. Throws
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

/** Trades; `ours` = the trader is one of our agents' wallets. */
async function writeTrades(ctx: IndexerContext, db: pg.PoolClient, trades: TradeRow[], agentOf: Map<string, string>, at: (block: number) => Date) {
  for (const t of trades) {
    await db.query(
      `insert into trade (chain_id, tx_hash, log_index, token_address, venue, trader, side, quote_amount, token_amount, creator_fee,
         platform_fee, ours, block_number, at, source, fee_asset, price_after)
       values ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17)
       on conflict (chain_id, tx_hash, log_index) do nothing`,
      [ctx.chainId, t.txHash, t.logIndex, t.token, t.venue, t.trader, t.side, t.quoteAmount.toString(), t.tokenAmount.toString(),
        t.creatorFee.toString(), t.platformFee.toString(), agentOf.has(t.trader), t.blockNumber,
        at(t.blockNumber), t.source, t.feeAsset, t.priceAfter?.toString() ?? null],
    )
  }
}

async function writeSnapshotsAndFees(ctx: IndexerContext, db: pg.PoolClient, snapshots: SnapshotRow[], fees: FeeRow[]) {
  for (const s of snapshots) {
    await db.query(
      `insert into token_snapshot (chain_id, token_address, block_number, log_index, source, token_reserve, quote_reserve, price)
       values ($1,$2,$3,$4,$5,$6,$7,$8) on conflict do nothing`,
      [ctx.chainId, s.token, s.blockNumber, s.logIndex, s.source, s.tokenReserve.toString(), s.quoteReserve.toString(), s.price.toString()],
    )
  }
  for (const f of fees) {
    await db.query(
      `insert into creator_fee_event (chain_id, tx_hash, log_index, token_address, kind, quote_amount, token_amount, block_number)
       values ($1,$2,$3,$4,$5,$6,$7,$8) on conflict do nothing`,
      [ctx.chainId, f.txHash, f.logIndex, f.token, f.kind, f.quote.toString(), f.tokenAmount.toString(), f.blockNumber],
    )
  }
}

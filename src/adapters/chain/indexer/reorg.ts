import type pg from 'pg'
import type { Hex } from 'viem'
import { withTransaction } from '../../db/transaction.ts'
import { byWalletThenNonce } from '../txSender/outbox.ts'
import { isAlreadyKnown } from '../txSender/txErrors.ts'
import { chainHash, type IndexerContext } from './indexerContext.ts'

/*
 * Reorgs: before each pass the newest stored block hash is compared with the chain; on a
 * mismatch the stored hashes are walked down to the common ancestor, and everything indexed
 * above it is deleted (a token from our own launch keeps its row, with its indexed fields
 * reset), the checkpoint moves back, and outbox transactions mined in a removed block go back to
 * `broadcast` and their stored signed bytes are sent again (never re-signed). They are marked
 * confirmed again once a receipt shows up (reconfirmOutbox.ts).
 */

/** An outbox row put back to `broadcast`, with the stored bytes to send again. */
export type Rebroadcast = { id: string; raw: Hex; hash: string; from_address: string; nonce: string }

/** Puts outbox rows mined in removed blocks back to `broadcast`; returns them for re-broadcast. */
async function resetOutbox(ctx: IndexerContext, db: pg.PoolClient, removedBlocks: string[]): Promise<Rebroadcast[]> {
  const { rows } = await db.query<Rebroadcast>(
    `update chain_tx set status = 'broadcast', block_number = null, block_hash = null, gas_used = null, effective_gas_price = null, contract_address = null,
            error = null, reorged_at = now(), reorg_count = reorg_count + 1, updated_at = now()
      where chain_id = $1 and status in ('confirmed', 'failed') and (block_hash = any($2))
      returning id, raw, hash, from_address, nonce`,
    [ctx.chainId, removedBlocks],
  )
  return rows
}

/** Sends the stored bytes of rows a reorg put back, per wallet in nonce order; returns how many there were. */
export async function rebroadcast({ client, log }: IndexerContext, rows: Rebroadcast[]): Promise<number> {
  for (const row of byWalletThenNonce(rows)) {
    try {
      await client.sendRawTransaction({ serializedTransaction: row.raw })
    } catch (err) {
      if (!isAlreadyKnown(err)) log.warn({ err: String(err), id: row.id }, 're-broadcast after a reorg failed; retried on the next pass')
    }
  }
  if (rows.length) log.warn({ transactions: rows.map((r) => r.hash) }, 'outbox transactions mined in removed blocks were re-broadcast')
  return rows.length
}

/**
 * Deletes everything indexed above `ancestor` and moves the checkpoint back to it (never below
 * the start block: with no common ancestor, everything goes and indexing restarts there).
 */
async function rewind(ctx: IndexerContext, ancestor: number, removedTxBlocks: string[]): Promise<Rebroadcast[]> {
  const { chainId, startBlock } = ctx
  return withTransaction(ctx.pool, async (db) => {
    await db.query(`select block_number from chain_checkpoint where chain_id = $1 for update`, [chainId])
    await db.query(`delete from trade where chain_id = $1 and block_number > $2`, [chainId, ancestor])
    await db.query(`delete from token_snapshot where chain_id = $1 and block_number > $2`, [chainId, ancestor])
    await db.query(`delete from creator_fee_event where chain_id = $1 and block_number > $2`, [chainId, ancestor])
    await db.query(`delete from market_anomaly where chain_id = $1 and block_number > $2`, [chainId, ancestor])
    await db.query(`delete from agent_transfer_in where chain_id = $1 and block_number > $2`, [chainId, ancestor])
    // A deposit removed before its confirmations is forgotten; a credited one stays (the ledger is
    // append-only), which only a reorg deeper than the confirmations can cause.
    await db.query(`delete from deposit where chain_id = $1 and block_number > $2 and status = 'pending'`, [chainId, ancestor])
    const { rows: deep } = await db.query<{ tx_hash: string }>(`select tx_hash from deposit where chain_id = $1 and block_number > $2`, [chainId, ancestor])
    if (deep.length) ctx.log.error({ transactions: deep.map((d) => d.tx_hash) }, 'a reorg removed deposits that were already credited')
    await db.query(
      `update token set graduated = false, graduated_block = null,
              pool_address = case when venue = 'venue-a' then null else pool_address end
        where chain_id = $1 and graduated_block > $2`,
      [chainId, ancestor],
    )
    // Tokens created above the ancestor: gone, unless our own launch confirmed them (the
    // launch keeps its row and metadata; the indexer fills the rest in again when it sees it).
    await db.query(`delete from token where chain_id = $1 and block_number > $2 and launch_id is null`, [chainId, ancestor])
    await db.query(
      `update token set indexed_block = null, graduated = false, graduated_block = null,
              curve_virtual_quote = null, graduation_threshold = null,
              pool_address = case when venue = 'venue-a' then null else pool_address end
        where chain_id = $1 and launch_id is not null and (block_number > $2 or indexed_block > $2)`,
      [chainId, ancestor],
    )
    await db.query(`delete from chain_block where chain_id = $1 and number > $2`, [chainId, ancestor])
    await db.query(`update chain_checkpoint set block_number = least(block_number, $2) where chain_id = $1`, [chainId, Math.max(ancestor, startBlock - 1)])
    // The automations' trigger feed evaluates the blocks indexed again (src/actors/automation/automations.ts).
    await db.query(`update automation_trigger_checkpoint set block_number = least(block_number, $2) where chain_id = $1`, [chainId, Math.max(ancestor, startBlock - 1)])
    return resetOutbox(ctx, db, removedTxBlocks)
  })
}

/**
 * Compares the newest stored block hash with the chain; on a mismatch walks the stored hashes
 * down to the common ancestor and rewinds to it. Returns the ancestor, or null when in step.
 */
export async function reconcile(ctx: IndexerContext): Promise<{ ancestor: number; rows: Rebroadcast[] } | null> {
  const { pool, client, chainId, log } = ctx
  const { rows: stored } = await pool.query<{ number: string; hash: string }>(
    `select number, hash from chain_block where chain_id = $1 order by number desc`,
    [chainId],
  )
  if (stored.length === 0) return null
  if ((await chainHash(client, Number(stored[0]!.number))) === stored[0]!.hash) return null
  let ancestor: number | undefined
  for (const s of stored.slice(1)) {
    if ((await chainHash(client, Number(s.number))) === s.hash) {
      ancestor = Number(s.number)
      break
    }
  }
  if (ancestor === undefined) {
    ancestor = -1
    log.error({ deepest: Number(stored.at(-1)!.number) }, 'reorg deeper than the stored block hashes: reindexing from the start block')
  }
  log.warn({ ancestor, was: Number(stored[0]!.number) }, 'chain reorganised: rewinding the index to the common ancestor')
  return { ancestor, rows: await rewind(ctx, ancestor, await removedOutboxBlocks(ctx, ancestor)) }
}

/**
 * Hashes of the blocks above `above` in which outbox transactions were recorded as mined and
 * that the chain no longer has (no block at that height, or another one). Checked block by
 * block, so a deep reorg or a chain restored from an older state re-sends exactly those.
 */
async function removedOutboxBlocks({ pool, client, chainId }: IndexerContext, above: number): Promise<string[]> {
  const { rows } = await pool.query<{ block_number: string; block_hash: string }>(
    `select distinct block_number, block_hash from chain_tx
      where chain_id = $1 and status in ('confirmed', 'failed') and block_number > $2`,
    [chainId, above],
  )
  const gone: string[] = []
  for (const r of rows) if ((await chainHash(client, Number(r.block_number))) !== r.block_hash) gone.push(r.block_hash)
  return gone
}

/**
 * Outbox rows mined above the checkpoint are not covered by the stored hashes: each one's block
 * is checked on the chain directly (gone, or another hash = removed by a reorg).
 */
export async function verifyUnindexedOutbox(ctx: IndexerContext, cp: number): Promise<Rebroadcast[]> {
  const gone = await removedOutboxBlocks(ctx, cp)
  if (gone.length === 0) return []
  ctx.log.warn({ blocks: gone }, 'outbox transactions were mined in blocks the chain no longer has')
  return withTransaction(ctx.pool, (db) => resetOutbox(ctx, db, gone))
}

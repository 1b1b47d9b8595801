import { broadcast } from './broadcast.ts'
import { byWalletThenNonce, type SenderContext, type TxRow } from './outbox.ts'
import type { WalletQueue } from './walletQueue.ts'

type OutboxRow = TxRow & { from_address: string }

/**
 * Re-broadcasts every stored, unconfirmed transaction in nonce order per wallet (at boot), so
 * that a node that restarted from an older state, or lost its pool, gets them back in order.
 * Transactions recorded as confirmed in the last 64 blocks whose receipt the node no longer has
 * (a chain that came back behind after a hard kill) go again too, first: without them the
 * wallet's stored next nonce would be ahead of the chain and every later transaction would
 * wait on a gap. Their rows get the new block once mined.
 */
export async function rebroadcastPending(ctx: SenderContext & { queue: WalletQueue }): Promise<number> {
  const { pool, client, chain, logger, queue } = ctx
  const head = await client.getBlockNumber({ cacheTime: 0 })
  const { rows: recent } = await pool.query<OutboxRow>(
    `select id, nonce, raw, hash, status, max_fee_per_gas, max_priority_fee_per_gas, from_address
       from chain_tx where chain_id = $1 and status = 'confirmed' and block_number > $2
      order by from_address, nonce`,
    [chain.chainId, (head > 64n ? head - 64n : 0n).toString()],
  )
  // Asked together: the read client sends calls made in one tick as one JSON-RPC batch.
  const receipts = await Promise.all(recent.map((row) => client.getTransactionReceipt({ hash: row.hash }).catch(() => null)))
  const lost = recent.filter((_, i) => !receipts[i])
  const { rows: open } = await pool.query<OutboxRow>(
    `select distinct on (from_address, nonce) id, nonce, raw, hash, status, max_fee_per_gas, max_priority_fee_per_gas, from_address
       from chain_tx where chain_id = $1 and status in ('queued', 'broadcast')
      order by from_address, nonce, created_at desc`,
    [chain.chainId],
  )
  const rows = byWalletThenNonce([...lost, ...open])
  if (lost.length > 0) logger.warn({ transactions: lost.length, head: head.toString() }, 'confirmed transactions missing from the chain; sending their stored bytes again')
  for (const row of rows) {
    await queue.run(row.from_address, () => broadcast(ctx, row)).catch((err) => logger.warn({ err: String(err), id: row.id }, 're-broadcast failed'))
  }
  // Waited for together, so boot is held at most one timeout however many went again.
  await Promise.all(
    lost.map(async (row) => {
      const receipt = await client.waitForTransactionReceipt({ hash: row.hash, timeout: 30_000 }).catch(() => null)
      if (!receipt) return
      if (receipt.status !== 'success') logger.error({ id: row.id, hash: row.hash }, 'a transaction replayed after the chain came back behind reverted this time')
      await pool.query(`update chain_tx set block_number = $2, block_hash = $3, gas_used = $4, effective_gas_price = $5, updated_at = now() where id = $1`, [
        row.id, receipt.blockNumber.toString(), receipt.blockHash, receipt.gasUsed.toString(), receipt.effectiveGasPrice?.toString() ?? null,
      ])
    }),
  )
  return rows.length
}

import { keccak256, type Hex, type LocalAccount, type TransactionReceipt } from 'viem'
import { broadcast } from './broadcast.ts'
import { latestStored, recordReceipt, type SenderContext, type TxRow } from './outbox.ts'

/**
 * Waits for the receipt of a stored transaction. When it is not mined in time, the same nonce
 * is re-signed with fees raised by 12.5% (nodes want at least 10%) and the old row is marked
 * `replaced`; the first of the two to be mined wins.
 */
export async function confirmTx(
  ctx: SenderContext & { confirmTimeoutMs: number },
  id: string,
  account?: LocalAccount,
): Promise<TransactionReceipt> {
  const { pool, client, confirmTimeoutMs } = ctx
  for (;;) {
    const row = await latestStored(pool, id)
    if (!row) throw new Error(`No stored transaction ${id}`)
    const { rows: all } = await pool.query<{ id: string; hash: Hex }>(`select id, hash from chain_tx where id = $1 or id like $1 || ':r%'`, [id])
    // The node may have lost it (a chain restored from an older state): the stored bytes go again.
    if (row.status === 'queued' || row.status === 'broadcast') await broadcast(ctx, row).catch(() => {})
    const receipt = await Promise.any(
      all.map((t) => client.waitForTransactionReceipt({ hash: t.hash, timeout: confirmTimeoutMs, pollingInterval: 100 })),
    ).catch(() => undefined)
    if (receipt) {
      const winner = all.find((t) => t.hash === receipt.transactionHash)!
      await recordReceipt(pool, winner.id, receipt)
      await pool.query(
        `update chain_tx set status = 'replaced', replaced_by = $2, updated_at = now()
          where (id = $1 or id like $1 || ':r%') and id <> $2 and status in ('queued', 'broadcast')`,
        [id, winner.id],
      )
      return receipt
    }
    if (!account) throw new Error(`Transaction ${row.hash} not mined within ${confirmTimeoutMs} ms`)
    await replaceWithFeeBump(ctx, row, account)
  }
}

/** Re-signs a stuck transaction's nonce with fees raised by 12.5%, stored as `<id>:r<n>` before it is sent. */
async function replaceWithFeeBump(ctx: SenderContext, row: TxRow, account: LocalAccount) {
  const { pool, client, chain, logger } = ctx
  const tx = await client.getTransaction({ hash: row.hash }).catch(() => undefined)
  if (!tx) {
    await broadcast(ctx, row)
    return
  }
  const bump = (v: bigint) => (v * 1125n) / 1000n + 1n
  const maxFeePerGas = bump(BigInt(row.max_fee_per_gas))
  const maxPriorityFeePerGas = bump(BigInt(row.max_priority_fee_per_gas))
  const raw = await account.signTransaction({
    chainId: chain.chainId, type: 'eip1559', nonce: Number(row.nonce), gas: tx.gas, maxFeePerGas, maxPriorityFeePerGas,
    to: tx.to ?? null, data: tx.input, value: tx.value,
  })
  // The round comes from what is stored (it survives restarts); the bytes go out only once stored.
  const base = row.id.replace(/:r\d+$/, '')
  const { rows: stored } = await pool.query<{ n: number }>(`select count(*)::int as n from chain_tx where id like $1 || ':r%'`, [base])
  const id = `${base}:r${(stored[0]?.n ?? 0) + 1}`
  const inserted = await pool.query(
    `insert into chain_tx (id, request_id, account_id, agent_id, effect_id, kind, chain_id, from_address, to_address, nonce, raw, hash,
       max_fee_per_gas, max_priority_fee_per_gas, status)
     select $2, request_id, account_id, agent_id, effect_id, kind, chain_id, from_address, to_address, nonce, $3, $4, $5, $6, 'queued'
       from chain_tx where id = $1
     on conflict (id) do nothing
     returning id`,
    [row.id, id, raw, keccak256(raw), maxFeePerGas.toString(), maxPriorityFeePerGas.toString()],
  )
  if (inserted.rowCount === 0) return
  logger.warn({ id, nonce: row.nonce }, 'transaction not mined in time; replaced with a fee bump')
  await broadcast(ctx, { id, raw })
}

/**
 * Confirms every transaction of the request that `hash` is the last of (an approval, then the
 * swap or launch), in nonce order; stops at the first one that reverted. This is where a wallet
 * operation's or a launch's receipts are accepted: when all succeeded, it waits (bounded) for
 * `awaitIndexed` of the last block, so the trade, the portfolio and the board show it by the
 * time `confirmed` is answered.
 */
export async function confirmRequest(
  ctx: SenderContext & { confirmTimeoutMs: number; awaitIndexed?: ((block: bigint) => Promise<unknown>) | undefined },
  hash: Hex,
  account: LocalAccount,
): Promise<TransactionReceipt[]> {
  const { pool } = ctx
  const { rows } = await pool.query<{ request_id: string }>('select request_id from chain_tx where hash = $1', [hash])
  if (!rows[0]) throw new Error(`transaction ${hash} is not in the outbox`)
  const { rows: batch } = await pool.query<{ id: string }>(
    `select id from chain_tx where request_id = $1 and id !~ ':r[0-9]+$' order by nonce`,
    [rows[0].request_id],
  )
  const receipts: TransactionReceipt[] = []
  for (const tx of batch) {
    const receipt = await confirmTx(ctx, tx.id, account)
    receipts.push(receipt)
    if (receipt.status !== 'success') break
  }
  const last = receipts.at(-1)
  if (last?.status === 'success') await ctx.awaitIndexed?.(last.blockNumber)
  return receipts
}

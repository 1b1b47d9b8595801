import type { Hex } from 'viem'
import type { SenderContext } from './outbox.ts'
import { isAlreadyKnown } from './txErrors.ts'

/** Sends stored bytes (a node that already has them is fine) and marks a `queued` row `broadcast`. */
export async function broadcast({ pool, client }: SenderContext, row: { id: string; raw: Hex }): Promise<void> {
  try {
    await client.sendRawTransaction({ serializedTransaction: row.raw })
  } catch (err) {
    if (!isAlreadyKnown(err)) throw err
  }
  await pool.query(`update chain_tx set status = 'broadcast', updated_at = now() where id = $1 and status = 'queued'`, [row.id])
}

/**
 * Broadcasts stored transactions in nonce order. Once signed and stored, a transaction counts
 * as sent whatever the node answers now: a failed broadcast is logged, never thrown, because a
 * caller that saw an error would give up on a nonce that is already taken (a gap, and bytes
 * that the boot-time re-broadcast sends later anyway). `confirm` sends the stored bytes again
 * until they are mined or replaced.
 */
export async function broadcastStored(ctx: SenderContext, rows: ReadonlyArray<{ id: string; raw: Hex }>): Promise<void> {
  for (const row of rows) {
    try {
      await broadcast(ctx, row)
    } catch (err) {
      // Later nonces cannot be mined before this one; confirm sends them all again.
      ctx.logger.warn({ err: String(err), txId: row.id }, 'broadcast of a stored transaction failed; confirm will send it again')
      return
    }
  }
}

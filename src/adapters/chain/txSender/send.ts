import { withTransaction } from '../../db/transaction.ts'
import { broadcastStored } from './broadcast.ts'
import { commitNextNonce, lockNextNonce } from './nonceAllocation.ts'
import { storedBatch, type PlannedTx, type SenderContext, type SentTx, type TxRequest } from './outbox.ts'
import { currentFeeCaps, signAndStore, simulateAndCheckFunds } from './signAndStore.ts'
import type { WalletQueue } from './walletQueue.ts'

/** Hook for crash tests: called at each recovery point of a send. */
export type FaultHook = (point: 'before_sign' | 'after_store' | 'after_broadcast', req: TxRequest) => void

/**
 * Sends the transactions `plan` returns for the wallet's next nonce. Under the wallet's nonce
 * row lock: the first transaction is simulated (a revert or missing funds aborts with no nonce
 * taken), all are signed and stored; then they are broadcast in nonce order. A second call
 * with the same id re-broadcasts the stored bytes.
 */
export async function sendPlanned(
  ctx: SenderContext & { queue: WalletQueue; fault?: FaultHook | undefined },
  req: TxRequest,
  plan: (firstNonce: number) => PlannedTx[],
): Promise<SentTx[]> {
  const { pool, chain, client, queue, fault } = ctx
  const from = req.account.address.toLowerCase()
  return queue.run(from, async () => {
    const prior = await storedBatch(pool, req.id)
    if (prior.length > 0) {
      await broadcastStored(ctx, prior.filter((row) => row.status === 'queued' || row.status === 'broadcast'))
      return prior.map((r) => ({ id: r.id, hash: r.hash, nonce: Number(r.nonce) }))
    }
    const chainNonce = await client.getTransactionCount({ address: req.account.address, blockTag: 'pending' })
    fault?.('before_sign', req)
    const rows = await withTransaction(pool, async (db) => {
      const first = await lockNextNonce(db, { chainId: chain.chainId, address: from, chainNonce })
      const txs = plan(first)
      const fees = await currentFeeCaps(client)
      const gases = await simulateAndCheckFunds(client, req, txs, fees)
      const stored = await signAndStore(db, ctx, { req, txs, first, gases, fees })
      await commitNextNonce(db, { chainId: chain.chainId, address: from, next: first + txs.length })
      return stored
    })
    fault?.('after_store', req)
    await broadcastStored(ctx, rows)
    fault?.('after_broadcast', req)
    return rows.map((r) => ({ id: r.id, hash: r.hash, nonce: r.nonce }))
  })
}

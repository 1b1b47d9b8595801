import type pg from 'pg'
import type { Hex, LocalAccount, TransactionReceipt } from 'viem'
import type { Logger } from '../../logger.ts'
import type { ChainHandle } from './chain.ts'
import { confirmRequest, confirmTx } from './txSender/confirm.ts'
import type { PlannedTx, SenderContext, SentTx, TxRequest } from './txSender/outbox.ts'
import { rebroadcastPending } from './txSender/rebroadcastPending.ts'
import { sendPlanned, type FaultHook } from './txSender/send.ts'
import { createWalletQueue } from './txSender/walletQueue.ts'
import { inSpan } from '../telemetry/spans.ts'

export type { PlannedTx, SentTx, TxRequest } from './txSender/outbox.ts'
export type { FaultHook } from './txSender/send.ts'
export { InsufficientFundsError, SimulationRevertedError, isAlreadyKnown, revertReason } from './txSender/txErrors.ts'

/*
 * The transaction outbox, one module per step of a transaction's life:
 *   txSender/nonceAllocation.ts    the wallet's next nonce, under a Postgres row lock
 *   txSender/signAndStore.ts       simulation, funds check, signing, storing the raw bytes
 *   txSender/send.ts               one request: lock, sign and store, then broadcast
 *   txSender/broadcast.ts          sending stored bytes, in nonce order
 *   txSender/confirm.ts            receipts, fee-bump replacement of a stuck transaction
 *   txSender/rebroadcastPending.ts re-sending (and re-confirming) the outbox at boot
 * Outbox rows mined in blocks a reorg removed are re-confirmed by the indexer
 * (indexer/reconfirmOutbox.ts).
 */

/**
 * One serial transaction queue per wallet. Nonces are allocated under a Postgres row lock and
 * the transaction is signed and stored (raw bytes + hash) in the same database transaction,
 * before it is broadcast; a retry of the same id re-broadcasts the stored bytes and never signs
 * again. Within this process each wallet's sends are serialised, so broadcasts go out in nonce
 * order. Simulation and the funds check happen before a nonce is taken, so a refused request
 * leaves no gap.
 *
 * @example
 * const sender = createTxSender({ pool, chain, logger })
 * const { hash } = await sender.send({ id: `${effect.id}:0`, account, to, data, ... })
 * const receipt = await sender.confirm(hash)
 */
export function createTxSender({
  pool,
  chain,
  logger,
  fault,
  confirmTimeoutMs = 30_000,
  awaitIndexed,
}: {
  pool: pg.Pool
  chain: ChainHandle
  logger: Logger
  fault?: FaultHook | undefined
  confirmTimeoutMs?: number
  /** Read your own writes: resolves once the indexer has processed a block (bounded by its own timeout). */
  awaitIndexed?: ((block: bigint) => Promise<unknown>) | undefined
}) {
  const ctx: SenderContext = { pool, chain, client: chain.publicClient, logger }
  const queue = createWalletQueue()
  return {
    // Spans (docs/operations.md, Traces): `chain.tx.sign` from the nonce's allocation to the
    // broadcast (hashes and nonces), `chain.tx.receipt` until the receipt (gas used, block).
    send: (req: TxRequest, plan: (firstNonce: number) => PlannedTx[]): Promise<SentTx[]> =>
      inSpan('chain.tx.sign', { 'chain.tx.request_id': req.id, 'chain.tx.from': req.account.address }, async (span) => {
        const sent = await sendPlanned({ ...ctx, queue, fault }, req, plan)
        span.setAttributes({ 'chain.tx.hash': sent.map((t) => t.hash), 'chain.tx.nonce': sent.map((t) => t.nonce) })
        return sent
      }),
    confirm: (id: string, account?: LocalAccount): Promise<TransactionReceipt> =>
      inSpan('chain.tx.receipt', { 'chain.tx.id': id }, async (span) => {
        const receipt = await confirmTx({ ...ctx, confirmTimeoutMs }, id, account)
        span.setAttributes(receiptAttributes([receipt]))
        return receipt
      }),
    confirmRequest: (hash: Hex, account: LocalAccount): Promise<TransactionReceipt[]> =>
      inSpan('chain.tx.receipt', { 'chain.tx.hash': hash }, async (span) => {
        const receipts = await confirmRequest({ ...ctx, confirmTimeoutMs, awaitIndexed }, hash, account)
        span.setAttributes(receiptAttributes(receipts))
        return receipts
      }),
    rebroadcastPending: (): Promise<number> => rebroadcastPending({ ...ctx, queue }),
  }
}
export type TxSender = ReturnType<typeof createTxSender>

function receiptAttributes(receipts: TransactionReceipt[]) {
  return {
    'chain.tx.hash': receipts.map((r) => r.transactionHash),
    'chain.tx.status': receipts.map((r) => r.status),
    'chain.tx.gas_used': receipts.map((r) => Number(r.gasUsed)),
    'chain.tx.block_number': receipts.map((r) => Number(r.blockNumber)),
  }
}

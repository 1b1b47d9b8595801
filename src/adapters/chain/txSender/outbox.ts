import type pg from 'pg'
import type { Hex, LocalAccount, PublicClient, TransactionReceipt } from 'viem'
import type { Logger } from '../../../logger.ts'
import type { ChainHandle } from '../chain.ts'

/** What every part of the sender works with: the outbox table, the chain and its read client. */
export type SenderContext = {
  pool: pg.Pool
  chain: ChainHandle
  client: PublicClient
  logger: Logger
}

export type TxRequest = {
  /** Stable id of this request (e.g. an effect id): its transactions are `<id>:<i>` and never signed twice. */
  id: string
  accountId: string
  agentId: string | null
  effectId: string | null
  account: LocalAccount
}

/** One transaction of a request; `gas` is set when it cannot be estimated ahead (it depends on an earlier one). */
import type { PlannedTx } from '../../../domain/swaps/swap.types.ts'
export type { PlannedTx } from '../../../domain/swaps/swap.types.ts'

export type SentTx = { id: string; hash: Hex; nonce: number }

/** A `chain_tx` row as the sender reads it. */
export type TxRow = {
  id: string
  nonce: string
  raw: Hex
  hash: Hex
  status: string
  max_fee_per_gas: string
  max_priority_fee_per_gas: string
}

/** The newest stored transaction under `id` (the original or its latest replacement `<id>:r<n>`). */
export async function latestStored(pool: pg.Pool, id: string): Promise<TxRow | undefined> {
  const { rows } = await pool.query<TxRow>(
    `select id, nonce, raw, hash, status, max_fee_per_gas, max_priority_fee_per_gas from chain_tx
      where id = $1 or id like $1 || ':r%' order by created_at desc limit 1`,
    [id],
  )
  return rows[0]
}

/** The transactions stored for a request, the latest (replacement) per nonce. */
export async function storedBatch(pool: pg.Pool, requestId: string): Promise<TxRow[]> {
  const { rows } = await pool.query<TxRow>(
    `select distinct on (nonce) id, nonce, raw, hash, status, max_fee_per_gas, max_priority_fee_per_gas from chain_tx
      where request_id = $1 order by nonce, created_at desc`,
    [requestId],
  )
  return rows
}

/** Sorts outbox rows by wallet, then nonce: the order they must reach a node in. */
export function byWalletThenNonce<T extends { from_address: string; nonce: string }>(rows: T[]): T[] {
  return [...rows].sort((a, b) =>
    a.from_address === b.from_address ? Number(a.nonce) - Number(b.nonce) : a.from_address < b.from_address ? -1 : 1,
  )
}

/**
 * Records a mined outbox transaction: `confirmed`, or `failed` when it reverted, with its block,
 * gas (used, and the price per gas it paid) and any created contract. `onlyIfBroadcast` leaves a row another path settled meanwhile.
 */
export async function recordReceipt(pool: pg.Pool, id: string, receipt: TransactionReceipt, { onlyIfBroadcast = false } = {}) {
  await pool.query(
    `update chain_tx set status = $2, block_number = $3, block_hash = $4, gas_used = $5, contract_address = $6,
            effective_gas_price = $7, updated_at = now()
      where id = $1${onlyIfBroadcast ? ` and status = 'broadcast'` : ''}`,
    [id, receipt.status === 'success' ? 'confirmed' : 'failed', receipt.blockNumber.toString(), receipt.blockHash,
      receipt.gasUsed.toString(), receipt.contractAddress?.toLowerCase() ?? null, receipt.effectiveGasPrice?.toString() ?? null],
  )
}

import type pg from 'pg'
import {
  BaseError,
  ContractFunctionRevertedError,
  keccak256,
  type Hex,
  type LocalAccount,
  type TransactionReceipt,
} from 'viem'
import type { Logger } from '../logger.ts'
import { ServiceError } from '../domain/errors.ts'
import type { ChainHandle } from './chain.ts'
import { withTransaction } from '../db/transaction.ts'

export type TxRequest = {
  /** Stable id of this request (e.g. an effect id): its transactions are `<id>:<i>` and never signed twice. */
  id: string
  accountId: string
  agentId: string | null
  effectId: string | null
  account: LocalAccount
}

/** One transaction of a request; `gas` is set when it cannot be estimated ahead (it depends on an earlier one). */
export type PlannedTx = { kind: string; to?: `0x${string}` | undefined; data?: Hex | undefined; value?: bigint | undefined; gas?: bigint | undefined }

export type SentTx = { id: string; hash: Hex; nonce: number }

/** Hook for crash tests: called at each recovery point of a send. */
export type FaultHook = (point: 'before_sign' | 'after_store' | 'after_broadcast', req: TxRequest) => void

export class InsufficientFundsError extends ServiceError {
  constructor({ needed, balance }: { needed: bigint; balance: bigint }) {
    super(`The agent wallet holds ${balance} wei but this needs about ${needed} wei (value plus gas).`, {
      code: 'insufficient_funds',
      status: 422,
    })
  }
}

export class SimulationRevertedError extends ServiceError {
  constructor(reason: string, cause?: unknown) {
    super(`The transaction would revert: ${reason}`, { code: 'simulation_reverted', status: 422, cause })
  }
}

/** The revert reason of a viem error, if it is one. */
export function revertReason(err: unknown): string | undefined {
  if (err instanceof BaseError) {
    const revert = err.walk((e) => e instanceof ContractFunctionRevertedError)
    if (revert instanceof ContractFunctionRevertedError) return revert.reason ?? revert.shortMessage
    const msg = err.shortMessage || err.message
    if (/revert/i.test(msg)) return msg.replace(/^.*?reverted(?: with reason string)?:?\s*/i, '').trim() || msg
  }
  return undefined
}

/** The node already has this transaction, or its nonce was used: re-sending it changed nothing. */
export const isAlreadyKnown = (err: unknown) =>
  /already known|nonce too low|known transaction|already imported/i.test(err instanceof Error ? err.message : String(err))

type TxRow = {
  id: string
  nonce: string
  raw: Hex
  hash: Hex
  status: string
  max_fee_per_gas: string
  max_priority_fee_per_gas: string
}

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
}: {
  pool: pg.Pool
  chain: ChainHandle
  logger: Logger
  fault?: FaultHook | undefined
  confirmTimeoutMs?: number
}) {
  const client = chain.publicClient
  const walletLocks = new Map<string, Promise<unknown>>()

  function serial<T>(wallet: string, fn: () => Promise<T>): Promise<T> {
    const prev = walletLocks.get(wallet) ?? Promise.resolve()
    const next = prev.then(fn, fn)
    const tail = next.catch(() => {})
    walletLocks.set(wallet, tail)
    void tail.then(() => walletLocks.get(wallet) === tail && walletLocks.delete(wallet))
    return next
  }

  async function existing(id: string): Promise<TxRow | undefined> {
    const { rows } = await pool.query<TxRow>(
      `select id, nonce, raw, hash, status, max_fee_per_gas, max_priority_fee_per_gas from chain_tx
        where id = $1 or id like $1 || ':r%' order by created_at desc limit 1`,
      [id],
    )
    return rows[0]
  }

  /** The transactions stored for a request, the latest (replacement) per nonce. */
  async function storedBatch(requestId: string): Promise<TxRow[]> {
    const { rows } = await pool.query<TxRow>(
      `select distinct on (nonce) id, nonce, raw, hash, status, max_fee_per_gas, max_priority_fee_per_gas from chain_tx
        where request_id = $1 order by nonce, created_at desc`,
      [requestId],
    )
    return rows
  }

  async function broadcast(row: { id: string; raw: Hex }): Promise<void> {
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
  async function broadcastStored(rows: ReadonlyArray<{ id: string; raw: Hex }>): Promise<void> {
    for (const row of rows) {
      try {
        await broadcast(row)
      } catch (err) {
        // Later nonces cannot be mined before this one; confirm sends them all again.
        logger.warn({ err: String(err), txId: row.id }, 'broadcast of a stored transaction failed; confirm will send it again')
        return
      }
    }
  }

  async function fees() {
    const block = await client.getBlock({ blockTag: 'latest' })
    const priority = 1_000_000_000n
    const base = block.baseFeePerGas ?? 1_000_000_000n
    return { maxFeePerGas: base * 2n + priority, maxPriorityFeePerGas: priority }
  }

  /**
   * Sends the transactions `plan` returns for the wallet's next nonce. Under the wallet's nonce
   * row lock: the first transaction is simulated (a revert or missing funds aborts with no nonce
   * taken), all are signed and stored; then they are broadcast in nonce order. A second call
   * with the same id re-broadcasts the stored bytes.
   */
  async function send(req: TxRequest, plan: (firstNonce: number) => PlannedTx[]): Promise<SentTx[]> {
    const from = req.account.address.toLowerCase()
    return serial(from, async () => {
      const prior = await storedBatch(req.id)
      if (prior.length > 0) {
        await broadcastStored(prior.filter((row) => row.status === 'queued' || row.status === 'broadcast'))
        return prior.map((r) => ({ id: r.id, hash: r.hash, nonce: Number(r.nonce) }))
      }
      const chainNonce = await client.getTransactionCount({ address: req.account.address, blockTag: 'pending' })
      fault?.('before_sign', req)
      const rows = await withTransaction(pool, async (db) => {
        await db.query(
          `insert into wallet_nonce (chain_id, address, next_nonce) values ($1, $2, $3) on conflict do nothing`,
          [chain.chainId, from, chainNonce],
        )
        const { rows: locked } = await db.query<{ next_nonce: string }>(
          `select next_nonce from wallet_nonce where chain_id = $1 and address = $2 for update`,
          [chain.chainId, from],
        )
        const first = Math.max(Number(locked[0]!.next_nonce), chainNonce)
        const txs = plan(first)
        const { maxFeePerGas, maxPriorityFeePerGas } = await fees()
        const gases: bigint[] = []
        for (const [i, tx] of txs.entries()) {
          if (tx.gas !== undefined) {
            gases.push(tx.gas)
            continue
          }
          if (i > 0) throw new Error('only the first planned transaction can be estimated')
          try {
            const est = await client.estimateGas({ account: req.account, to: tx.to, data: tx.data, value: tx.value ?? 0n })
            gases.push((est * 12n) / 10n)
          } catch (err) {
            const reason = revertReason(err)
            if (reason) throw new SimulationRevertedError(reason, err)
            throw err
          }
        }
        const balance = await client.getBalance({ address: req.account.address })
        const needed = txs.reduce((sum, tx, i) => sum + gases[i]! * maxFeePerGas + (tx.value ?? 0n), 0n)
        if (balance < needed) throw new InsufficientFundsError({ needed, balance })
        const rows: Array<{ id: string; raw: Hex; hash: Hex; nonce: number }> = []
        for (const [i, tx] of txs.entries()) {
          const nonce = first + i
          const raw = await req.account.signTransaction({
            chainId: chain.chainId, type: 'eip1559', nonce, gas: gases[i]!, maxFeePerGas, maxPriorityFeePerGas,
            to: tx.to ?? null, data: tx.data, value: tx.value ?? 0n,
          })
          const hash = keccak256(raw)
          const id = `${req.id}:${i}`
          await db.query(
            `insert into chain_tx (id, request_id, account_id, agent_id, effect_id, kind, chain_id, from_address, to_address, nonce,
               raw, hash, max_fee_per_gas, max_priority_fee_per_gas, status)
             values ($1,$14,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,'queued')`,
            [id, req.accountId, req.agentId, req.effectId, tx.kind, chain.chainId, from, tx.to?.toLowerCase() ?? null,
              nonce, raw, hash, maxFeePerGas.toString(), maxPriorityFeePerGas.toString(), req.id],
          )
          rows.push({ id, raw, hash, nonce })
        }
        await db.query(`update wallet_nonce set next_nonce = $3 where chain_id = $1 and address = $2`, [
          chain.chainId, from, first + txs.length,
        ])
        return rows
      })
      fault?.('after_store', req)
      await broadcastStored(rows)
      fault?.('after_broadcast', req)
      return rows.map((r) => ({ id: r.id, hash: r.hash, nonce: r.nonce }))
    })
  }

  /**
   * Waits for the receipt of a stored transaction. When it is not mined in time, the same nonce
   * is re-signed with fees raised by 12.5% (nodes want at least 10%) and the old row is marked
   * `replaced`; the first of the two to be mined wins.
   */
  async function confirm(id: string, account?: LocalAccount): Promise<TransactionReceipt> {
    for (;;) {
      const row = await existing(id)
      if (!row) throw new Error(`No stored transaction ${id}`)
      const { rows: all } = await pool.query<{ id: string; hash: Hex }>(
        `select id, hash from chain_tx where id = $1 or id like $1 || ':r%'`,
        [id],
      )
      // The node may have lost it (a chain restored from an older state): the stored bytes go again.
      if (row.status === 'queued' || row.status === 'broadcast') await broadcast(row).catch(() => {})
      const receipt = await Promise.any(
        all.map((t) => client.waitForTransactionReceipt({ hash: t.hash, timeout: confirmTimeoutMs, pollingInterval: 100 })),
      ).catch(() => undefined)
      if (receipt) {
        const winner = all.find((t) => t.hash === receipt.transactionHash)!
        await pool.query(
          `update chain_tx set status = $2, block_number = $3, block_hash = $4, gas_used = $5, contract_address = $6, updated_at = now()
            where id = $1`,
          [winner.id, receipt.status === 'success' ? 'confirmed' : 'failed', receipt.blockNumber.toString(), receipt.blockHash,
            receipt.gasUsed.toString(), receipt.contractAddress?.toLowerCase() ?? null],
        )
        await pool.query(
          `update chain_tx set status = 'replaced', replaced_by = $2, updated_at = now()
            where (id = $1 or id like $1 || ':r%') and id <> $2 and status in ('queued', 'broadcast')`,
          [id, winner.id],
        )
        return receipt
      }
      if (!account) throw new Error(`Transaction ${row.hash} not mined within ${confirmTimeoutMs} ms`)
      await replace(row, account)
    }
  }

  async function replace(row: TxRow, account: LocalAccount) {
    const tx = await client.getTransaction({ hash: row.hash }).catch(() => undefined)
    if (!tx) {
      await broadcast(row)
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
    await broadcast({ id, raw })
  }

  /**
   * Confirms every transaction of the request that `hash` is the last of (an approval, then the
   * swap or launch), in nonce order; stops at the first one that reverted.
   */
  async function confirmRequest(hash: Hex, account: LocalAccount): Promise<TransactionReceipt[]> {
    const { rows } = await pool.query<{ request_id: string }>('select request_id from chain_tx where hash = $1', [hash])
    if (!rows[0]) throw new Error(`transaction ${hash} is not in the outbox`)
    const { rows: batch } = await pool.query<{ id: string }>(
      `select id from chain_tx where request_id = $1 and id !~ ':r[0-9]+$' order by nonce`,
      [rows[0].request_id],
    )
    const receipts: TransactionReceipt[] = []
    for (const tx of batch) {
      const receipt = await confirm(tx.id, account)
      receipts.push(receipt)
      if (receipt.status !== 'success') break
    }
    return receipts
  }

  /**
   * Re-broadcasts every stored, unconfirmed transaction in nonce order per wallet (at boot), so
   * that a node that restarted from an older state, or lost its pool, gets them back in order.
   * Transactions recorded as confirmed in the last 64 blocks whose receipt the node no longer has
   * (a chain that came back behind after a hard kill) go again too, first: without them the
   * wallet's stored next nonce would be ahead of the chain and every later transaction would
   * wait on a gap. Their rows get the new block once mined.
   */
  async function rebroadcastPending(): Promise<number> {
    const head = await client.getBlockNumber({ cacheTime: 0 })
    const { rows: recent } = await pool.query<TxRow & { from_address: string }>(
      `select id, nonce, raw, hash, status, max_fee_per_gas, max_priority_fee_per_gas, from_address
         from chain_tx where chain_id = $1 and status = 'confirmed' and block_number > $2
        order by from_address, nonce`,
      [chain.chainId, (head > 64n ? head - 64n : 0n).toString()],
    )
    // Asked together: the read client sends calls made in one tick as one JSON-RPC batch.
    const receipts = await Promise.all(recent.map((row) => client.getTransactionReceipt({ hash: row.hash }).catch(() => null)))
    const lost = recent.filter((_, i) => !receipts[i])
    const { rows: open } = await pool.query<TxRow & { from_address: string }>(
      `select distinct on (from_address, nonce) id, nonce, raw, hash, status, max_fee_per_gas, max_priority_fee_per_gas, from_address
         from chain_tx where chain_id = $1 and status in ('queued', 'broadcast')
        order by from_address, nonce, created_at desc`,
      [chain.chainId],
    )
    const rows = [...lost, ...open].sort((a, b) =>
      a.from_address === b.from_address ? Number(a.nonce) - Number(b.nonce) : a.from_address < b.from_address ? -1 : 1,
    )
    if (lost.length > 0) logger.warn({ transactions: lost.length, head: head.toString() }, 'confirmed transactions missing from the chain; sending their stored bytes again')
    for (const row of rows) {
      await serial(row.from_address, () => broadcast(row)).catch((err) => logger.warn({ err: String(err), id: row.id }, 're-broadcast failed'))
    }
    // Waited for together, so boot is held at most one timeout however many went again.
    await Promise.all(
      lost.map(async (row) => {
        const receipt = await client.waitForTransactionReceipt({ hash: row.hash, timeout: 30_000 }).catch(() => null)
        if (!receipt) return
        if (receipt.status !== 'success') logger.error({ id: row.id, hash: row.hash }, 'a transaction replayed after the chain came back behind reverted this time')
        await pool.query(
          `update chain_tx set block_number = $2, block_hash = $3, gas_used = $4, updated_at = now() where id = $1`,
          [row.id, receipt.blockNumber.toString(), receipt.blockHash, receipt.gasUsed.toString()],
        )
      }),
    )
    return rows.length
  }

  return { send, confirm, confirmRequest, rebroadcastPending }
}
export type TxSender = ReturnType<typeof createTxSender>

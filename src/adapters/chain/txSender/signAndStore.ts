import type pg from 'pg'
import { keccak256, type Hex, type PublicClient } from 'viem'
import type { PlannedTx, SenderContext, TxRequest } from './outbox.ts'
import { InsufficientFundsError, SimulationRevertedError, revertReason } from './txErrors.ts'

export type FeeCaps = { maxFeePerGas: bigint; maxPriorityFeePerGas: bigint }
export type StoredTx = { id: string; raw: Hex; hash: Hex; nonce: number }

/** EIP-1559 caps from the latest block: twice its base fee plus a 1 gwei tip. */
export async function currentFeeCaps(client: PublicClient): Promise<FeeCaps> {
  const block = await client.getBlock({ blockTag: 'latest' })
  const priority = 1_000_000_000n
  const base = block.baseFeePerGas ?? 1_000_000_000n
  return { maxFeePerGas: base * 2n + priority, maxPriorityFeePerGas: priority }
}

/**
 * Gas for each planned transaction: the first is estimated (this is the simulation: a revert
 * becomes `SimulationRevertedError`), later ones must bring their own, since they depend on it.
 * Then the wallet must hold value plus gas for all of them, else `InsufficientFundsError`.
 */
export async function simulateAndCheckFunds(client: PublicClient, req: TxRequest, txs: PlannedTx[], fees: FeeCaps): Promise<bigint[]> {
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
  const needed = txs.reduce((sum, tx, i) => sum + gases[i]! * fees.maxFeePerGas + (tx.value ?? 0n), 0n)
  if (balance < needed) throw new InsufficientFundsError({ needed, balance })
  return gases
}

/**
 * Signs each planned transaction with consecutive nonces from `first` and stores it (`queued`,
 * raw bytes + hash) as `<request id>:<i>` in the caller's database transaction: the bytes exist
 * in the outbox before anything is broadcast, so a retry re-sends them and never re-signs.
 */
export async function signAndStore(
  db: pg.PoolClient,
  { chain }: Pick<SenderContext, 'chain'>,
  { req, txs, first, gases, fees }: { req: TxRequest; txs: PlannedTx[]; first: number; gases: bigint[]; fees: FeeCaps },
): Promise<StoredTx[]> {
  const from = req.account.address.toLowerCase()
  const rows: StoredTx[] = []
  for (const [i, tx] of txs.entries()) {
    const nonce = first + i
    const raw = await req.account.signTransaction({
      chainId: chain.chainId, type: 'eip1559', nonce, gas: gases[i]!, ...fees,
      to: tx.to ?? null, data: tx.data, value: tx.value ?? 0n,
    })
    const hash = keccak256(raw)
    const id = `${req.id}:${i}`
    await db.query(
      `insert into chain_tx (id, request_id, account_id, agent_id, effect_id, kind, chain_id, from_address, to_address, nonce,
         raw, hash, max_fee_per_gas, max_priority_fee_per_gas, status)
       values ($1,$14,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,'queued')`,
      [id, req.accountId, req.agentId, req.effectId, tx.kind, chain.chainId, from, tx.to?.toLowerCase() ?? null,
        nonce, raw, hash, fees.maxFeePerGas.toString(), fees.maxPriorityFeePerGas.toString(), req.id],
    )
    rows.push({ id, raw, hash, nonce })
  }
  return rows
}

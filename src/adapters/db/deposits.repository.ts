import type pg from 'pg'
import { formatUnits } from 'viem'
import type { PendingDeposit } from '../../domain/billing/getDepositInfo.ts'
import type { DepositAsset } from '../../domain/billing/depositCredits.ts'

/** A fresh custodial key for an account's deposit address, encrypted at rest. */
export type NewDepositKey = (accountId: string) => { address: string; encryptedKey: string }

/**
 * Deposit addresses and the deposits seen, in SQL.
 *
 * @example
 * const deposits = createDepositsRepository(pool, { chainId, decimals: { ETH: 18, USDC: 6 } })
 * const address = await deposits.address(accountId, newKey)
 */
export function createDepositsRepository(pool: pg.Pool, opts: { chainId: number; decimals: Record<DepositAsset, number> }) {
  return {
    /**
     * The account's deposit address, made on first call. `insert ... on conflict do nothing` on
     * the account's primary key: two first calls at once store one row, and both read it back.
     */
    async address(accountId: string, newKey: NewDepositKey): Promise<string> {
      const existing = await pool.query<{ address: string }>('select address from deposit_address where account_id = $1', [accountId])
      if (existing.rows[0]) return existing.rows[0].address
      const key = newKey(accountId)
      await pool.query(
        'insert into deposit_address (account_id, address, key_encrypted) values ($1, $2, $3) on conflict (account_id) do nothing',
        [accountId, key.address.toLowerCase(), key.encryptedKey],
      )
      const { rows } = await pool.query<{ address: string }>('select address from deposit_address where account_id = $1', [accountId])
      return rows[0]!.address
    },
    /** Transfers seen and not yet credited, with the confirmations they have at the chain's `head`. */
    async pending(accountId: string, head: number): Promise<PendingDeposit[]> {
      const { rows } = await pool.query<{ asset: DepositAsset; amount: string; tx_hash: string; log_index: number; block_number: string }>(
        `select asset, amount::text, tx_hash, log_index, block_number from deposit
          where chain_id = $1 and account_id = $2 and status = 'pending' order by block_number, tx_hash, log_index`,
        [opts.chainId, accountId],
      )
      return rows.map((r) => ({
        asset: r.asset,
        amount: formatUnits(BigInt(r.amount), opts.decimals[r.asset]),
        txHash: r.tx_hash,
        logIndex: r.log_index,
        blockNumber: Number(r.block_number),
        confirmations: Math.max(0, head - Number(r.block_number) + 1),
      }))
    },
  }
}
export type DepositsRepository = ReturnType<typeof createDepositsRepository>

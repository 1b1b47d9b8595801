import type pg from 'pg'
import { erc20Abi, getAbiItem, type Hex } from 'viem'
import { mapLimit } from '../../../domain/util/mapLimit.ts'
import type { DepositAsset } from '../../../domain/billing/depositCredits.ts'
import { lower, RPC_PARALLEL, type IndexerContext } from './indexerContext.ts'
import type { BlockReader } from './blockReader.ts'

/** A transfer to a deposit address, as the range that saw it writes it (status `pending`). */
export type DepositRow = {
  txHash: Hex
  /** The Transfer log's index; -1 for a plain ETH transfer (one per transaction). */
  logIndex: number
  accountId: string
  address: string
  asset: DepositAsset
  amount: bigint
  blockNumber: bigint
  blockHash: Hex
}

const transferEvent = getAbiItem({ abi: erc20Abi, name: 'Transfer' })
/** Deposit addresses per getLogs topic filter. */
const ADDRESSES_PER_FILTER = 500

/** Deposit addresses (lower case) to the account that owns each. */
async function depositOwners({ pool }: IndexerContext): Promise<Map<string, string>> {
  const { rows } = await pool.query<{ address: string; account_id: string }>('select address, account_id from deposit_address')
  return new Map(rows.map((r) => [r.address, r.account_id]))
}

/**
 * Transfers to deposit addresses in blocks [from, to]: USDC `Transfer` logs (filtered by the
 * `to` topic), and plain ETH transactions whose `to` is a deposit address (ETH has no log: each
 * block is read with its transactions, and only when some deposit address exists). ETH sent by
 * a contract (an internal call) is not seen.
 */
export async function findDeposits(ctx: IndexerContext, from: number, to: number, blocks: BlockReader): Promise<DepositRow[]> {
  if (!ctx.deposits) return []
  const owners = await depositOwners(ctx)
  if (owners.size === 0) return []
  const addresses = [...owners.keys()] as Hex[]
  const rows: DepositRow[] = []
  const range = { fromBlock: BigInt(from), toBlock: BigInt(to) }
  for (let i = 0; i < addresses.length; i += ADDRESSES_PER_FILTER) {
    const logs = await ctx.client.getLogs({
      ...range, strict: true, address: ctx.contracts.usdc, event: transferEvent, args: { to: addresses.slice(i, i + ADDRESSES_PER_FILTER) },
    })
    for (const l of logs) {
      const dest = lower(l.args.to)
      if (l.args.value === 0n || lower(l.args.from) === dest) continue
      rows.push({ txHash: l.transactionHash, logIndex: l.logIndex, accountId: owners.get(dest)!, address: dest, asset: 'USDC', amount: l.args.value, blockNumber: l.blockNumber, blockHash: l.blockHash })
    }
  }
  const blockNumbers = Array.from({ length: to - from + 1 }, (_, i) => BigInt(from + i))
  await mapLimit(blockNumbers, RPC_PARALLEL, async (blockNumber) => {
    const b = await blocks(blockNumber)
    for (const t of b.transactions) {
      const dest = t.to ? lower(t.to) : undefined
      if (!dest || t.value === 0n || !owners.has(dest) || lower(t.from) === dest) continue
      const receipt = await ctx.client.getTransactionReceipt({ hash: t.hash })
      if (receipt.status !== 'success') continue
      rows.push({ txHash: t.hash, logIndex: -1, accountId: owners.get(dest)!, address: dest, asset: 'ETH', amount: t.value, blockNumber, blockHash: b.hash })
    }
  })
  return rows
}

/** Writes the deposits a range saw as `pending`, in the range's transaction (a transfer seen twice is kept once). */
export async function writeDeposits(ctx: IndexerContext, db: pg.PoolClient, rows: DepositRow[]): Promise<void> {
  if (rows.length === 0) return
  const col = <T,>(f: (d: DepositRow) => T) => rows.map(f)
  await db.query(
    `insert into deposit (chain_id, tx_hash, log_index, account_id, address, asset, amount, block_number, block_hash)
     select $1::int, * from unnest($2::text[], $3::int[], $4::uuid[], $5::text[], $6::text[], $7::numeric[], $8::bigint[], $9::text[])
     on conflict do nothing`,
    [ctx.chainId, col((d) => lower(d.txHash)), col((d) => d.logIndex), col((d) => d.accountId), col((d) => d.address), col((d) => d.asset),
      col((d) => d.amount.toString()), col((d) => d.blockNumber.toString()), col((d) => d.blockHash)],
  )
  ctx.log.info({ deposits: rows.length }, 'deposits seen; credited after their confirmations')
}

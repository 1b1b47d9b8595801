import type pg from 'pg'
import { erc20Abi, getAbiItem, getAddress, zeroAddress, type Hex } from 'viem'
import { mapLimit } from '../../../domain/util/mapLimit.ts'
import { chainUnavailableOf, createPriceReader } from '../priceReader.ts'
import { resolveToken, tokenUsd } from '../tokenInfo.ts'
import { ServiceUnavailableError } from '../../../domain/errors.ts'
import { lower, RPC_PARALLEL, type IndexerContext } from './indexerContext.ts'
import type { BlockReader } from './blockReader.ts'

/**
 * A transfer into an agent wallet, as the range that saw it writes it (table
 * `agent_transfer_in`), with its USD value at its own block (usd18; null when unpriced).
 */
export type TransferInRow = {
  txHash: Hex
  /** The Transfer log's index; -1 for a plain ETH transfer (one per transaction). */
  logIndex: number
  agentId: string
  wallet: string
  /** The token (lower case); WETH's address for ETH, as the wallet's ledger keys it. */
  token: string
  native: boolean
  from: string
  amount: bigint
  blockNumber: bigint
  blockHash: Hex
  usd18: bigint | null
}

const transferEvent = getAbiItem({ abi: erc20Abi, name: 'Transfer' })
/** Agent wallets per getLogs topic filter. */
const WALLETS_PER_FILTER = 500

/**
 * Transfers into agent wallets in blocks [from, to]: ERC-20 `Transfer` logs to them (any token,
 * filtered by the `to` topic) and plain ETH transactions to them (each block read with its
 * transactions, shared with the deposit scan; a reverted one is skipped). Left out: what arrives
 * in a transaction the wallet sent itself (a swap's output, a claim: the wallet operation
 * records those), mints (`from` the zero address: the dev faucet's USDC, like its ETH set with
 * `anvil_setBalance`, has no recorded cost), and ETH sent by a contract (an internal call has no
 * transaction of its own). Each is valued at its block's prices (usdAt); a token with no market
 * there has a null value.
 */
export async function findTransfersIn(ctx: IndexerContext, from: number, to: number, blocks: BlockReader): Promise<TransferInRow[]> {
  const { rows: agents } = await ctx.pool.query<{ id: string; wallet_address: string }>(`select id, wallet_address from agent`)
  if (agents.length === 0) return []
  const agentOf = new Map(agents.map((a) => [lower(a.wallet_address), a.id]))
  const wallets = [...agentOf.keys()] as Hex[]
  const weth = lower(ctx.contracts.weth)
  const range = { fromBlock: BigInt(from), toBlock: BigInt(to) }
  const found: TransferInRow[] = []
  for (let i = 0; i < wallets.length; i += WALLETS_PER_FILTER) {
    const logs = await ctx.client.getLogs({ ...range, strict: true, event: transferEvent, args: { to: wallets.slice(i, i + WALLETS_PER_FILTER) } })
    for (const l of logs) {
      const dest = lower(l.args.to)
      const src = lower(l.args.from)
      if (l.args.value === 0n || src === dest || src === zeroAddress) continue
      found.push({
        txHash: l.transactionHash, logIndex: l.logIndex, agentId: agentOf.get(dest)!, wallet: dest, token: lower(l.address), native: false,
        from: src, amount: l.args.value, blockNumber: l.blockNumber, blockHash: l.blockHash, usd18: null,
      })
    }
  }
  const senders = new Map<string, string>()
  const blockNumbers = Array.from({ length: to - from + 1 }, (_, i) => BigInt(from + i))
  await mapLimit(blockNumbers, RPC_PARALLEL, async (blockNumber) => {
    const b = await blocks(blockNumber)
    for (const t of b.transactions) {
      const src = lower(t.from)
      senders.set(lower(t.hash), src)
      const dest = t.to ? lower(t.to) : undefined
      if (!dest || t.value === 0n || !agentOf.has(dest) || src === dest) continue
      const receipt = await ctx.client.getTransactionReceipt({ hash: t.hash })
      if (receipt.status !== 'success') continue
      found.push({ txHash: t.hash, logIndex: -1, agentId: agentOf.get(dest)!, wallet: dest, token: weth, native: true, from: src, amount: t.value, blockNumber, blockHash: b.hash, usd18: null })
    }
  })
  // What a wallet's own transaction delivered to it is that operation's (swap output, claim).
  const rows = found.filter((r) => r.native || senders.get(lower(r.txHash)) !== r.wallet)
  await mapLimit(rows, RPC_PARALLEL, async (r) => {
    r.usd18 = await usdAt(ctx, r.token, r.native, r.amount, r.blockNumber)
  })
  return rows
}

/**
 * usd18 of an amount at a block, as the portfolio values a holding (tokenInfo.tokenUsd: quote
 * assets, stocks, launched tokens on their curve or pool), else by its route to USDC or WETH;
 * null without a market there (a chain that cannot be read fails the range).
 */
async function usdAt(ctx: IndexerContext, token: string, native: boolean, amount: bigint, blockNumber: bigint): Promise<bigint | null> {
  try {
    const reader = await createPriceReader(ctx.chain, blockNumber)
    const info = await resolveToken({ pool: ctx.pool, chain: ctx.chain }, native ? 'ETH' : token)
    const valued = info ? await tokenUsd(ctx.chain, reader, info, amount) : undefined
    return valued ? valued.amountUsd18 : await reader.amountUsd(getAddress(token), amount)
  } catch (err) {
    // The reader wraps every failed read as chain_unavailable; only a transport failure is one
    // (a token whose reads revert is unpriced, and must not hold the index back).
    if (chainUnavailableOf(err instanceof ServiceUnavailableError ? err.cause : err)) throw err
    return null
  }
}

/** Writes the transfers in a range saw, in the range's transaction (one seen twice is kept once). */
export async function writeTransfersIn(ctx: IndexerContext, db: pg.PoolClient, rows: TransferInRow[], at: (block: number) => Date): Promise<void> {
  if (rows.length === 0) return
  const col = <T,>(f: (d: TransferInRow) => T) => rows.map(f)
  await db.query(
    `insert into agent_transfer_in (chain_id, tx_hash, log_index, agent_id, wallet, token_address, native, from_address, amount, usd_value, block_number, at)
     select $1::int, * from unnest($2::text[], $3::int[], $4::uuid[], $5::text[], $6::text[], $7::bool[], $8::text[], $9::numeric[],
       $10::numeric[], $11::bigint[], $12::timestamptz[])
     on conflict do nothing`,
    [ctx.chainId, col((d) => lower(d.txHash)), col((d) => d.logIndex), col((d) => d.agentId), col((d) => d.wallet), col((d) => d.token),
      col((d) => d.native), col((d) => d.from), col((d) => d.amount.toString()),
      col((d) => (d.usd18 === null ? null : usd18Text(d.usd18))), col((d) => d.blockNumber.toString()),
      col((d) => at(Number(d.blockNumber)))],
  )
}

/** usd18 as an exact decimal string ("12.500000000000000000"). */
const usd18Text = (v: bigint) => `${v / 10n ** 18n}.${(v % 10n ** 18n).toString().padStart(18, '0')}`

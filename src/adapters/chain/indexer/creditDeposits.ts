import { withTransaction } from '../../db/transaction.ts'
import { depositCredits, depositRef, type DepositAsset } from '../../../domain/billing/depositCredits.ts'
import { pegUsd18 } from '../../../domain/tokens/priceMath.ts'
import { createPriceReader } from '../priceReader.ts'
import { chainHash, type IndexerContext } from './indexerContext.ts'

type PendingRow = { tx_hash: string; log_index: number; account_id: string; asset: DepositAsset; amount: string; block_number: string; block_hash: string }

/**
 * Credits the pending deposits that have their confirmations (a deposit in block b has
 * `head - b + 1`) and are indexed: each one's block must still be on the chain, then, in one
 * transaction, the row turns `credited` (only while `pending`) and the `deposit` ledger entry is
 * written with ref `chainId:txHash:logIndex` (unique), so a transfer is credited once whatever
 * restarts or repeats. USDC counts 1 USD; ETH is valued at the WETH/USDC pool's price at the
 * deposit's block. Returns how many were credited.
 */
export async function creditConfirmedDeposits(ctx: IndexerContext, head: number): Promise<number> {
  const d = ctx.deposits
  if (!d) return 0
  // One statement per pass (indexed on pending rows), checkpoint included: most passes find none.
  const { rows } = await ctx.pool.query<PendingRow>(
    `select tx_hash, log_index, account_id, asset, amount::text, block_number, block_hash from deposit
      where chain_id = $1 and status = 'pending' and block_number <= $2
        and block_number <= (select block_number from chain_checkpoint where chain_id = $1)
      order by block_number, tx_hash, log_index`,
    [ctx.chainId, head - d.confirmations + 1],
  )
  const onChain = new Map<string, string | null>()
  let credited = 0
  for (const r of rows) {
    if (!onChain.has(r.block_number)) onChain.set(r.block_number, await chainHash(ctx.client, Number(r.block_number)))
    // Reorged away since it was indexed: the next pass's reorg check removes it.
    if (onChain.get(r.block_number) !== r.block_hash) continue
    const decimals = d.chain.manifest.quoteAssets[r.asset]?.decimals ?? (r.asset === 'USDC' ? 6 : 18)
    const unitUsd18 = r.asset === 'USDC' ? pegUsd18('USDC')! : ((await (await createPriceReader(d.chain, BigInt(r.block_number))).quote('ETH'))?.usd18 ?? 0n)
    const { usd18, credits } = depositCredits({ amount: BigInt(r.amount), decimals, unitUsd18 })
    const done = await withTransaction(ctx.pool, async (tx) => {
      const { rowCount } = await tx.query(
        `update deposit set status = 'credited', credits = $4, usd_value = $5::numeric / 1e18, credited_at = now()
          where chain_id = $1 and tx_hash = $2 and log_index = $3 and status = 'pending'`,
        [ctx.chainId, r.tx_hash, r.log_index, credits, usd18.toString()],
      )
      if (!rowCount) return false
      // Worth less than one credit: recorded as credited with 0, no ledger entry.
      if (credits > 0) {
        await d.credits.append({ accountId: r.account_id, kind: 'deposit', credits, ref: depositRef({ chainId: ctx.chainId, txHash: r.tx_hash, logIndex: r.log_index }) }, tx)
      }
      return true
    })
    if (done) {
      credited++
      ctx.log.info({ account: r.account_id, asset: r.asset, amount: r.amount, credits, tx: r.tx_hash }, 'deposit credited')
    }
  }
  return credited
}

import type { IndexerContext } from './indexerContext.ts'

/** Reads a block with its transactions, once per range (the deposit scan and the transfers-in scan share it). */
export type BlockReader = (blockNumber: bigint) => ReturnType<typeof readBlock>

const readBlock = (ctx: IndexerContext, blockNumber: bigint) => ctx.client.getBlock({ blockNumber, includeTransactions: true })

/**
 * @example
 * const blocks = blockReader(ctx)
 * const b = await blocks(57n) // read once, whoever asks first
 */
export function blockReader(ctx: IndexerContext): BlockReader {
  const memo = new Map<bigint, ReturnType<typeof readBlock>>()
  return (blockNumber) => {
    let p = memo.get(blockNumber)
    if (!p) {
      p = readBlock(ctx, blockNumber)
      p.catch(() => memo.delete(blockNumber))
      memo.set(blockNumber, p)
    }
    return p
  }
}

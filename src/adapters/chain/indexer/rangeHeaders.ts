import { mapLimit } from '../../../domain/util/mapLimit.ts'
import { RPC_PARALLEL, type IndexerContext } from './indexerContext.ts'
import { RangeReorgedError } from './indexerErrors.ts'
import type { EventLog, Header } from './indexedRows.ts'

async function readHeader({ client }: IndexerContext, n: number): Promise<Header> {
  const b = await client.getBlock({ blockNumber: BigInt(n) })
  return { number: Number(b.number), hash: b.hash, parentHash: b.parentHash, timestamp: b.timestamp }
}

/**
 * Headers of the blocks that have logs (timestamps, consistency) and of the tail from
 * `tailFrom` to `to` (kept for reorg checks), checked to form one chain with the logs and with
 * the stored block below `from`. Throws RangeReorgedError when the chain changed while the
 * range was read.
 */
export async function rangeHeaders(
  ctx: IndexerContext,
  { from, to, tailFrom, logs }: { from: number; to: number; tailFrom: number; logs: Array<Pick<EventLog, 'blockNumber' | 'blockHash'>> },
): Promise<Map<number, Header>> {
  const wanted = new Set<number>([to])
  for (let n = tailFrom; n <= to; n++) wanted.add(n)
  for (const l of logs) wanted.add(Number(l.blockNumber))
  const headers = new Map<number, Header>()
  for (const h of await mapLimit([...wanted].sort((a, b) => a - b), RPC_PARALLEL, (n) => readHeader(ctx, n))) headers.set(h.number, h)
  for (const l of logs) {
    if (headers.get(Number(l.blockNumber))?.hash !== l.blockHash) throw new RangeReorgedError(`log in block ${l.blockNumber} is from another fork`)
  }
  for (let n = tailFrom + 1; n <= to; n++) {
    if (headers.get(n)!.parentHash !== headers.get(n - 1)!.hash) throw new RangeReorgedError(`block ${n} does not follow block ${n - 1}`)
  }
  if (headers.has(from)) {
    const { rows } = await ctx.pool.query<{ hash: string }>(`select hash from chain_block where chain_id = $1 and number = $2`, [ctx.chainId, from - 1])
    if (rows[0] && rows[0].hash !== headers.get(from)!.parentHash) throw new RangeReorgedError(`block ${from} does not follow the stored block ${from - 1}`)
  }
  return headers
}

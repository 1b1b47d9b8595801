import type { PublicClient } from 'viem'
import type { ChainHandle } from './chain.ts'

/** Results of view calls per block: a block's state never changes, so neither do they. */
const perChain = new WeakMap<ChainHandle, Map<bigint, Map<string, Promise<unknown>>>>()
const BLOCKS_KEPT = 4

/** A view of the chain pinned to one block (`pinToLatestBlock`), with that block's number. */
export type PinnedChain = ChainHandle & { blockNumber: bigint }

const keyOf = (args: unknown) => JSON.stringify(args, (_k, v) => (typeof v === 'bigint' ? `${v}n` : v))

/**
 * A view of the chain pinned to its latest block: every `readContract` (and `getBlock` of
 * "latest") reads that block, and identical reads of the same block are answered once for all
 * requests. Quotes under load mostly share a block, so most of their reads cost nothing; the
 * answer is still exact for the block it names. One `eth_blockNumber` per call of this function.
 * The block is returned as `blockNumber`, for readers that pin their reads themselves
 * (`createPriceReader(pinned, pinned.blockNumber)`).
 *
 * @example
 * const pinned = await pinToLatestBlock(chain)
 * const route = await findRoute(pinned, { tokenIn, tokenOut, amountIn })
 * const prices = await createPriceReader(pinned, pinned.blockNumber)
 */
export async function pinToLatestBlock(chain: ChainHandle): Promise<PinnedChain> {
  const base = chain.publicClient
  const blockNumber = await base.getBlockNumber({ cacheTime: 0 })
  let blocks = perChain.get(chain)
  if (!blocks) perChain.set(chain, (blocks = new Map()))
  let memo = blocks.get(blockNumber)
  if (!memo) {
    blocks.set(blockNumber, (memo = new Map()))
    for (const b of [...blocks.keys()].sort((x, y) => (x < y ? -1 : 1)).slice(0, Math.max(0, blocks.size - BLOCKS_KEPT))) blocks.delete(b)
  }
  const cached = <T>(key: string, read: () => Promise<T>): Promise<T> => {
    const hit = memo!.get(key) as Promise<T> | undefined
    if (hit) return hit
    const p = read()
    p.catch(() => memo!.delete(key))
    memo!.set(key, p)
    return p
  }
  const client = Object.create(base) as PublicClient
  // The pinned block replaces any block the caller names, so it is not part of the key: a read
  // that names the pinned block (a price reader's) shares the answer of one that names none.
  client.readContract = ((args: Parameters<PublicClient['readContract']>[0]) =>
    cached(`call:${keyOf({ ...args, abi: undefined, blockNumber: undefined, blockTag: undefined })}`, () => base.readContract({ ...args, blockNumber } as never))) as PublicClient['readContract']
  client.getBlock = ((args?: Parameters<PublicClient['getBlock']>[0]) => {
    const latest = !args || (args as { blockTag?: string }).blockTag === 'latest'
    return latest ? cached('block', () => base.getBlock({ blockNumber })) : base.getBlock(args)
  }) as PublicClient['getBlock']
  return { ...chain, publicClient: client, blockNumber }
}

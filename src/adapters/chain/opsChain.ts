import type { ChainHandle } from './chain.ts'
import type { OpsChain } from '../../domain/ops/ports.ts'

/** The chain client as the ops port: the head within a timeout, a block's time. */
export function opsChain(chain: ChainHandle): OpsChain {
  const client = chain.publicClient
  return {
    head(timeoutMs) {
      const timeout = new Promise<null>((r) => setTimeout(() => r(null), timeoutMs).unref())
      return Promise.race([client.getBlockNumber().then(Number, () => null), timeout])
    },
    headNow: () => client.getBlockNumber({ cacheTime: 0 }),
    blockTime: async (blockNumber) => new Date(Number((await client.getBlock({ blockNumber })).timestamp) * 1000).toISOString(),
  }
}

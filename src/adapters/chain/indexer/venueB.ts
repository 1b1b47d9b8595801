import type { Address } from 'viem'
import { poolParams } from './ammPool.ts'
import { lower, quoteSymbolOf, type IndexerContext } from './indexerContext.ts'
import type { EventLog, FoundToken } from './indexedRows.ts'

/*
 * venue-b, the instant pool launcher: PoolLaunched (a token placed single-sided into an AMM
 * pool). Its trades are the pool's Swap events (ammPool.ts), its fees the FeeLocker's.
 */

/** A token launched into a pool, with the pool's parameters at that block. */
export async function venueBPoolLaunched(ctx: IndexerContext, l: EventLog): Promise<FoundToken> {
  const a = l.args as { token: Address; pair: Address; creator: Address; quote: Address; name: string; symbol: string; supply: bigint }
  const blockNumber = l.blockNumber
  const token = lower(a.token)
  const p = await poolParams(ctx, a.pair, token, blockNumber)
  return {
    row: {
      address: token, venue: 'venue-b', symbol: a.symbol, name: a.name, quoteAddress: lower(a.quote),
      quoteSymbol: await quoteSymbolOf(ctx, lower(a.quote), blockNumber), creator: lower(a.creator), totalSupply: a.supply,
      poolAddress: lower(a.pair), verified: false, blockNumber: Number(blockNumber), txHash: l.transactionHash,
      curveVirtualQuote: null, graduationThreshold: null,
      poolTokenIsToken0: p.tokenIsToken0, poolVirtualToken: p.virtualToken, poolVirtualQuote: p.virtualQuote,
    },
    info: { address: token, venue: 'venue-b', quoteAddress: lower(a.quote), pool: lower(a.pair), ...p },
  }
}

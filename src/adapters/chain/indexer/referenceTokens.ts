import { getAddress } from 'viem'
import { poolParams } from './ammPool.ts'
import type { IndexerContext } from './indexerContext.ts'
import type { TokenInfo } from './indexedRows.ts'

const params = new WeakMap<IndexerContext, Promise<TokenInfo[]>>()

/**
 * The reference pools as the decoder knows tokens (which side the token is, the virtual
 * reserves: immutable in the pair, so read once per indexer). Fresh objects on every call.
 */
export async function referenceTokens(ctx: IndexerContext): Promise<TokenInfo[]> {
  let p = params.get(ctx)
  if (!p) {
    p = readParams(ctx)
    params.set(ctx, p)
    p.catch(() => params.delete(ctx))
  }
  return (await p).map((t) => ({ ...t }))
}

async function readParams(ctx: IndexerContext): Promise<TokenInfo[]> {
  const block = await ctx.client.getBlockNumber({ cacheTime: 0 })
  const usdc = ctx.contracts.usdc.toLowerCase()
  return Promise.all(ctx.referencePools.map(async (r): Promise<TokenInfo> => {
    const p = await poolParams(ctx, getAddress(r.pool), r.token, block)
    return { address: r.token, venue: 'amm', quoteAddress: usdc, pool: r.pool, tokenIsToken0: p.tokenIsToken0, virtualToken: p.virtualToken, virtualQuote: p.virtualQuote }
  }))
}

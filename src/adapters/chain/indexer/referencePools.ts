import { getAddress } from 'viem'
import type { ChainHandle } from '../chain.ts'
import { deploymentOf } from '../tokenAdapters.ts'
import { referenceAssets } from '../../../domain/intel/intelTokens.ts'
import { poolParams } from './ammPool.ts'
import type { IndexerContext } from './indexerContext.ts'
import type { TokenInfo } from './indexedRows.ts'

/*
 * The deployment's own pools, followed beside the launched tokens' ones: WETH/USDC (WETH's
 * trades, priced in USDC) and each stock's USDC pool. Their swaps and reserves go into `trade`
 * and `token_snapshot` under the token's address like any pool's (venue `amm`, quote USDC), so
 * candles, movers, anomalies and yield cover them; they have no `token` row (that table is the
 * launched tokens'), their names come from the manifest.
 */

/** A reference pool: the token priced in it (lower case), its symbol and name, the pool. */
export type ReferencePool = { token: string; symbol: string; name: string; pool: string }

/**
 * The pools of the reference assets market intelligence covers (`referenceAssets`, one list for
 * the index and the answers).
 *
 * @example
 * referencePoolsOf(chain) // [{ token: weth, symbol: 'WETH', pool: wethUsdcPair, … }, { token: tslax, symbol: 'TSLAx', … }, …]
 */
export function referencePoolsOf(chain: ChainHandle): ReferencePool[] {
  return referenceAssets(deploymentOf(chain)).map((a) => ({ token: a.address, symbol: a.symbol, name: a.name, pool: a.pool }))
}

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

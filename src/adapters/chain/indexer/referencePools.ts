import { getAddress } from 'viem'
import type { DeploymentManifest } from '../manifest.ts'
import { poolParams } from './ammPool.ts'
import { lower, type IndexerContext } from './indexerContext.ts'
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
 * @example
 * referencePoolsOf(manifest) // [{ token: weth, symbol: 'WETH', pool: wethUsdcPair, … }, { token: tslax, symbol: 'TSLAx', … }, …]
 */
export function referencePoolsOf(m: DeploymentManifest): ReferencePool[] {
  return [
    { token: lower(m.contracts.weth), symbol: 'WETH', name: 'Wrapped Ether', pool: lower(m.contracts.wethUsdcPair) },
    ...m.stocks.map((s) => ({ token: lower(s.address), symbol: s.symbol, name: s.name, pool: lower(s.pair) })),
  ]
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
  const usdc = lower(ctx.contracts.usdc)
  return Promise.all(ctx.referencePools.map(async (r): Promise<TokenInfo> => {
    const p = await poolParams(ctx, getAddress(r.pool), r.token, block)
    return { address: r.token, venue: 'amm', quoteAddress: usdc, pool: r.pool, tokenIsToken0: p.tokenIsToken0, virtualToken: p.virtualToken, virtualQuote: p.virtualQuote }
  }))
}

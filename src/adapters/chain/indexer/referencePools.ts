import type { ChainHandle } from '../chain.ts'
import { deploymentOf } from '../tokenAdapters.ts'
import { referenceAssets } from '../../../domain/intel/intelTokens.ts'

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

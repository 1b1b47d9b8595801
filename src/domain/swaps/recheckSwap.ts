import type { SwapPorts } from './ports.ts'
import type { SwapParams } from './swap.types.ts'
import { DEADLINE_SECONDS } from './swapRules.ts'
import { fmt } from './swapResource.ts'

/** What re-checking a move at its approval decides: send it (with fresh parameters), or fail with this error. */
export type Recheck = { params?: Record<string, unknown>; failure?: { code: string; message: string } }

/**
 * A swap that waited for approval, priced again at the latest block on its stored route: when
 * it would now receive less than its `minAmountOut` (the price moved beyond its slippage while
 * it waited), it fails with `price_moved` and nothing is sent; else it is sent with the same
 * minimum and a router deadline counted from now (the one planned with the request may have
 * passed while it waited).
 *
 * @example
 * const { params, failure } = await recheckSwap(swapPorts, op.params as SwapParams)
 */
export async function recheckSwap(deps: Pick<SwapPorts, 'market'>, p: SwapParams): Promise<Recheck> {
  const at = await deps.market.atLatestBlock()
  const [priced, now] = await Promise.all([at.priceRoute(p.route, BigInt(p.amountIn)), at.blockTimestamp()])
  if (priced.amountOut < BigInt(p.minAmountOut)) {
    const d = p.tokenOutInfo.decimals
    const symbol = p.tokenOutInfo.symbol
    return {
      failure: {
        code: 'price_moved',
        message: `The price moved beyond the swap's slippage while it awaited approval: it would now receive ${fmt(priced.amountOut, d)} ${symbol}, under its minimum of ${fmt(p.minAmountOut, d)} ${symbol}. Nothing was sent; request the swap again.`,
      },
    }
  }
  return { params: { deadline: (now + DEADLINE_SECONDS).toString() } }
}

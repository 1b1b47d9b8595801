import type { PricedRoute, SwapRoute } from './swap.types.ts'
import type { MarketAtBlock, SwapPorts, SwapWarning } from './ports.ts'
import type { ResolvedSwap } from './resolveSwap.ts'
import { paperPoolRoute } from '../paper/paperPool.ts'
import { DEADLINE_SECONDS, policyValueUsd, swapWarnings } from './swapRules.ts'

export type PriceSwapDeps = Pick<SwapPorts, 'market' | 'simulator'>
export type PricedSwap = { priced: PricedRoute; valueInUsd: string; valueOutUsd: string | null; deadline: bigint; warnings: SwapWarning[] }

/** Prices the route (the quote's, or the best found), values both sides in USD and gathers the warnings. */
export async function priceSwap(
  deps: PriceSwapDeps,
  p: ResolvedSwap,
  route: SwapRoute | undefined,
  pinned: Promise<MarketAtBlock> = deps.market.atLatestBlock(),
): Promise<PricedSwap> {
  const at = await pinned
  // A paper token's swap is priced against its virtual pool as it stands (docs/api.md, "Paper agents").
  const priced = p.paperPool
    ? paperPoolRoute(p.paperPool, p.tokenIn, p.tokenOut, p.amountIn)
    : route
    ? await at.priceRoute(route, p.amountIn)
    : await at.findRoute({ tokenIn: p.tokenIn.address, tokenOut: p.tokenOut.address, amountIn: p.amountIn })
  const prices = await at.prices()
  const [inUsd, outUsd, deadline] = await Promise.all([
    prices.usd(p.tokenIn.address, p.amountIn).catch(() => null),
    prices.usd(p.tokenOut.address, priced.amountOut).catch(() => null),
    at.blockTimestamp().then((t) => t + DEADLINE_SECONDS),
  ])
  const warnings = swapWarnings({ tokenIn: p.tokenIn, tokenOut: p.tokenOut, priceImpactBps: priced.priceImpactBps, inUsd, outUsd })
  // (A paper token has no contract to simulate a sale back on.)
  if (!p.tokenOut.verified && !p.paperPool) {
    warnings.push(
      ...(await deps.simulator.sellBackWarnings({
        wallet: p.agent.wallet,
        route: priced,
        tokenIn: p.tokenIn,
        tokenOut: p.tokenOut,
        amountIn: p.amountIn,
        expectedOut: priced.amountOut,
        deadline,
      })),
    )
  }
  return { priced, valueInUsd: policyValueUsd(inUsd, outUsd), valueOutUsd: outUsd, deadline, warnings }
}

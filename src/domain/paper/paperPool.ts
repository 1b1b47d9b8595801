import type { PricedRoute, SwapRoute, SwapTokenInfo } from '../swaps/swap.types.ts'

/** A paper launch's virtual pool as a swap reads it: its token, its quote asset's symbol, its reserves (base units) and fee. */
export type PaperPoolState = { token: string; symbol: string; quoteSymbol: string; quoteReserve: bigint; tokenReserve: bigint; feeBps: number }

/**
 * What a constant-product pool (x * y = k) pays for `amountIn`, its fee taken from the input, as
 * an AMM pair does: out = in·(1 − fee)·R_out / (R_in + in·(1 − fee)).
 *
 * @example
 * poolAmountOut(10n ** 18n, 5n * 10n ** 18n, 10n ** 27n, 100) // 165_…  (a fifth of a 5 ETH pool, 1 % fee)
 */
export function poolAmountOut(amountIn: bigint, reserveIn: bigint, reserveOut: bigint, feeBps: number): bigint {
  const net = amountIn * BigInt(10_000 - feeBps)
  return (net * reserveOut) / (reserveIn * 10_000n + net)
}

/** The reserves of a pool after a trade (`quoteIn`: the quote asset goes in). */
export function poolAfter(pool: PaperPoolState, quoteIn: boolean, amountIn: bigint, amountOut: bigint): PaperPoolState {
  return quoteIn
    ? { ...pool, quoteReserve: pool.quoteReserve + amountIn, tokenReserve: pool.tokenReserve - amountOut }
    : { ...pool, tokenReserve: pool.tokenReserve + amountIn, quoteReserve: pool.quoteReserve - amountOut }
}

/**
 * A swap against a paper token's virtual pool, priced as a route of one AMM hop whose address is
 * the paper token's own (no pair contract exists): the amount out at the pool's reserves now and
 * the price impact (fees excluded) against its mid price.
 */
export function paperPoolRoute(pool: PaperPoolState, tokenIn: SwapTokenInfo, tokenOut: SwapTokenInfo, amountIn: bigint): PricedRoute {
  const quoteIn = tokenIn.address.toLowerCase() !== pool.token
  const [rin, rout] = quoteIn ? [pool.quoteReserve, pool.tokenReserve] : [pool.tokenReserve, pool.quoteReserve]
  const amountOut = poolAmountOut(amountIn, rin, rout, pool.feeBps)
  const noFee = poolAmountOut(amountIn, rin, rout, 0)
  // The price impact: how far below the mid price (rout / rin) the fee-less fill is.
  const mid = (amountIn * rout) / rin
  const priceImpactBps = mid === 0n ? 0 : Number(((mid - noFee) * 10_000n) / mid)
  const route: SwapRoute = {
    kind: 'amm',
    path: [tokenIn.address, tokenOut.address],
    hops: [{ venue: 'amm', address: pool.token as SwapRoute['path'][number], tokenIn: tokenIn.address, tokenOut: tokenOut.address, feeBps: pool.feeBps }],
  }
  const fee = (amountIn * BigInt(pool.feeBps)) / 10_000n
  return { ...route, amounts: [amountIn, amountOut], amountOut, priceImpactBps, fees: [{ hop: 0, token: tokenIn.address, amount: fee, feeBps: pool.feeBps }] }
}

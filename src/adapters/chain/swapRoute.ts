/**
 * Swap routing and pricing over the reference venues: venue-a bonding curves (tokens not yet
 * graduated) and AMM pools found through the factory, multi-hop through WETH and USDC.
 *
 * A route is one transaction: either a single curve trade (buy with the curve's quote asset,
 * sell for it) or a router swap along an AMM path. Routes that would mix a curve and a pool
 * (e.g. a WETH-quoted curve token to USDC) are refused with `no_route`: the second transaction
 * of such a pair is signed before the first is mined, so if the first reverted the second would
 * spend whatever the wallet already holds of the intermediate asset.
 */
import { getAddress, zeroAddress, type Address } from 'viem'
import type { ChainHandle } from './chain.ts'
import { AmmPairArtifact, AmmRouterArtifact, BondingCurveLaunchpadArtifact } from '../../dev/artifacts/index.ts'
import { pairOf, readOnce } from './pairs.ts'
import { ServiceError } from '../../domain/errors.ts'

import type { HopFee, PricedRoute, RouteHop, SwapRoute, SwapVenue } from '../../domain/swaps/swap.types.ts'
export type { HopFee, PricedRoute, RouteHop, SwapRoute, SwapVenue } from '../../domain/swaps/swap.types.ts'

export class NoRouteError extends ServiceError {
  constructor(message: string) {
    super(message, { code: 'no_route', status: 422 })
  }
}

const lower = (a: string) => a.toLowerCase() as Address
const BPS = 10_000n
const CURVE_FEE_BPS = 100

type Curve = { quote: Address; virtualQuoteReserve: bigint; quoteReserve: bigint; tokenReserve: bigint }

/** The venue-a curve of a token that has not graduated, or undefined. */
export async function activeCurve(chain: ChainHandle, token: Address): Promise<Curve | undefined> {
  const c = await chain.publicClient.readContract({
    address: chain.manifest.contracts.venueA,
    abi: BondingCurveLaunchpadArtifact.abi,
    functionName: 'getCurve',
    args: [getAddress(token)],
  })
  if (c.creator === zeroAddress || c.graduated) return undefined
  return { quote: lower(c.quote), virtualQuoteReserve: c.virtualQuoteReserve, quoteReserve: c.quoteReserve, tokenReserve: c.tokenReserve }
}

type PoolState = { reserveIn: bigint; reserveOut: bigint; hookBps: bigint }

async function poolState(chain: ChainHandle, pair: Address, tokenIn: Address): Promise<PoolState> {
  const c = { address: pair, abi: AmmPairArtifact.abi } as const
  const [token0, [e0, e1], hookBps] = await Promise.all([
    readOnce(chain, `token0:${pair}`, () => chain.publicClient.readContract({ ...c, functionName: 'token0' })),
    chain.publicClient.readContract({ ...c, functionName: 'getEffectiveReserves' }),
    readOnce(chain, `feeBps:${pair}`, () => chain.publicClient.readContract({ ...c, functionName: 'feeBps' })),
  ])
  const zeroForOne = lower(token0) === tokenIn
  return { reserveIn: zeroForOne ? e0 : e1, reserveOut: zeroForOne ? e1 : e0, hookBps }
}

/** 1 - Π(1 - impact_i), in bps, from per-hop impacts given as fractions num/den. */
function combineImpact(parts: Array<{ num: bigint; den: bigint }>): number {
  const SCALE = 10n ** 18n
  let keep = SCALE
  for (const { num, den } of parts) keep = den === 0n ? 0n : (keep * (den - num)) / den
  return Number(((SCALE - keep) * BPS) / SCALE)
}

/**
 * Prices a route for `amountIn` at the current chain state, with the contracts' own quote
 * functions (`quoteBuy`/`quoteSell`, `getAmountsOut`), so the amount matches what a trade
 * would get now. Throws `no_route` when the route cannot trade that amount now.
 */
export async function priceRoute(chain: ChainHandle, route: SwapRoute, amountIn: bigint): Promise<PricedRoute> {
  const client = chain.publicClient
  const venueA = { address: chain.manifest.contracts.venueA, abi: BondingCurveLaunchpadArtifact.abi } as const
  if (route.kind === 'curve-buy' || route.kind === 'curve-sell') {
    const hop = route.hops[0]!
    const token = route.kind === 'curve-buy' ? hop.tokenOut : hop.tokenIn
    const curve = await activeCurve(chain, token)
    if (!curve) throw new NoRouteError('The token graduated from its bonding curve since this route was found; quote again.')
    const V = curve.virtualQuoteReserve + curve.quoteReserve
    if (route.kind === 'curve-buy') {
      const out = await client.readContract({ ...venueA, functionName: 'quoteBuy', args: [getAddress(token), amountIn] })
      if (out === 0n) throw new NoRouteError('The amount is too small to buy any tokens on the curve.')
      const fee = (amountIn * BigInt(CURVE_FEE_BPS)) / BPS
      const net = amountIn - fee
      return {
        ...route, amounts: [amountIn, out], amountOut: out,
        priceImpactBps: combineImpact([{ num: net, den: V + net }]),
        fees: [{ hop: 0, token: hop.tokenIn, amount: fee, feeBps: CURVE_FEE_BPS }],
      }
    }
    const gross = (V * amountIn) / (curve.tokenReserve + amountIn)
    if (gross > curve.quoteReserve) {
      throw new NoRouteError('The curve does not hold enough quote to buy this many tokens back (it only pays out what buyers put in).')
    }
    const out = await client.readContract({ ...venueA, functionName: 'quoteSell', args: [getAddress(token), amountIn] })
    if (out === 0n) throw new NoRouteError('The amount is too small to sell on the curve.')
    return {
      ...route, amounts: [amountIn, out], amountOut: out,
      priceImpactBps: combineImpact([{ num: amountIn, den: curve.tokenReserve + amountIn }]),
      fees: [{ hop: 0, token: hop.tokenOut, amount: gross - out, feeBps: CURVE_FEE_BPS }],
    }
  }
  let amounts: readonly bigint[]
  try {
    amounts = await client.readContract({
      address: chain.manifest.contracts.router,
      abi: AmmRouterArtifact.abi,
      functionName: 'getAmountsOut',
      args: [amountIn, route.path.map((a) => getAddress(a))],
    })
  } catch {
    throw new NoRouteError('The pools on this route cannot trade this amount now (no liquidity, or the amount is too small).')
  }
  const states = await Promise.all(route.hops.map((h) => poolState(chain, h.address, h.tokenIn)))
  const impacts = states.map((s, i) => {
    const a = amounts[i]!
    const afterHook = a - (a * s.hookBps) / BPS
    const net = (afterHook * 997n) / 1000n
    return { num: net, den: s.reserveIn + net }
  })
  const fees = states.map((s, i): HopFee => {
    const a = amounts[i]!
    const hook = (a * s.hookBps) / BPS
    return { hop: i, token: route.hops[i]!.tokenIn, amount: hook + ((a - hook) * 3n) / 1000n, feeBps: route.hops[i]!.feeBps }
  })
  return { ...route, amounts: [...amounts], amountOut: amounts.at(-1)!, priceImpactBps: combineImpact(impacts), fees }
}

async function ammRoute(chain: ChainHandle, path: Address[]): Promise<SwapRoute | undefined> {
  const hops: RouteHop[] = []
  for (let i = 0; i < path.length - 1; i++) {
    const pair = await pairOf(chain, path[i]!, path[i + 1]!)
    if (!pair) return undefined
    const hookBps = await chain.publicClient.readContract({ address: pair, abi: AmmPairArtifact.abi, functionName: 'feeBps' })
    hops.push({ venue: 'amm', address: pair, tokenIn: path[i]!, tokenOut: path[i + 1]!, feeBps: 30 + Number(hookBps) })
  }
  return { kind: 'amm', path, hops }
}

/**
 * The best route for an exact-input swap of `amountIn` of `tokenIn` into `tokenOut` (addresses;
 * WETH for ETH): the curve when either token is on a venue-a curve, otherwise the AMM path with
 * the largest output among the direct pool and paths through WETH and/or USDC.
 *
 * @example
 * const route = await findRoute(chain, { tokenIn: usdc, tokenOut: tsla, amountIn: 100_000_000n })
 * route.amountOut
 */
export async function findRoute(
  chain: ChainHandle,
  { tokenIn, tokenOut, amountIn }: { tokenIn: Address; tokenOut: Address; amountIn: bigint },
): Promise<PricedRoute> {
  const a = lower(tokenIn)
  const b = lower(tokenOut)
  const venueA = lower(chain.manifest.contracts.venueA)
  const [curveIn, curveOut] = await Promise.all([activeCurve(chain, a), activeCurve(chain, b)])
  if (curveOut) {
    if (curveOut.quote !== a) {
      throw new NoRouteError(
        `The token out still trades on its venue-a bonding curve, which only takes its quote asset (${curveOut.quote}); ` +
          'swap into that asset first, then buy.',
      )
    }
    return priceRoute(chain, { kind: 'curve-buy', path: [a, b], hops: [{ venue: 'venue-a', address: venueA, tokenIn: a, tokenOut: b, feeBps: CURVE_FEE_BPS }] }, amountIn)
  }
  if (curveIn) {
    if (curveIn.quote !== b) {
      throw new NoRouteError(
        `The token in still trades on its venue-a bonding curve, which only pays out its quote asset (${curveIn.quote}); ` +
          'sell for that asset first, then swap it.',
      )
    }
    return priceRoute(chain, { kind: 'curve-sell', path: [a, b], hops: [{ venue: 'venue-a', address: venueA, tokenIn: a, tokenOut: b, feeBps: CURVE_FEE_BPS }] }, amountIn)
  }
  const hubs = [lower(chain.manifest.contracts.weth), lower(chain.manifest.contracts.usdc)].filter((h) => h !== a && h !== b)
  const paths: Address[][] = [[a, b], ...hubs.map((h) => [a, h, b])]
  if (hubs.length === 2) paths.push([a, hubs[0]!, hubs[1]!, b], [a, hubs[1]!, hubs[0]!, b])
  const routes = (await Promise.all(paths.map((p) => ammRoute(chain, p)))).filter((r): r is SwapRoute => !!r)
  const priced = (await Promise.all(routes.map((r) => priceRoute(chain, r, amountIn).catch(() => undefined)))).filter(
    (r): r is PricedRoute => !!r,
  )
  if (priced.length === 0) {
    throw new NoRouteError(
      routes.length === 0
        ? 'No pool or curve connects these tokens, directly or through WETH or USDC.'
        : 'The pools connecting these tokens cannot trade this amount now (no liquidity, or the amount is too small).',
    )
  }
  // Most output first; on a tie, fewer hops.
  priced.sort((x, y) => (y.amountOut > x.amountOut ? 1 : y.amountOut < x.amountOut ? -1 : x.hops.length - y.hops.length))
  return priced[0]!
}

/** The reverse of a route (for a sell-back simulation). */
export function reverseRoute(route: SwapRoute): SwapRoute {
  const kind = route.kind === 'curve-buy' ? 'curve-sell' : route.kind === 'curve-sell' ? 'curve-buy' : 'amm'
  return {
    kind,
    path: [...route.path].reverse(),
    hops: [...route.hops].reverse().map((h) => ({ ...h, tokenIn: h.tokenOut, tokenOut: h.tokenIn })),
  }
}

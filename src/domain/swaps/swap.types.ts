import type { Address, Hex } from 'viem'

/**
 * The swap's types as the domain speaks them; the chain adapters (src/adapters/chain/swapRoute.ts,
 * swapPlanner.ts, the tx sender) build and read values of these types.
 */

export type SwapVenue = 'venue-a' | 'amm'

export type RouteHop = {
  venue: SwapVenue
  /** The curve contract (venue-a) or the AMM pair. */
  address: Address
  tokenIn: Address
  tokenOut: Address
  /** All fees of the hop in basis points of its input (curve: 100; pool: 30 LP + fee hook). */
  feeBps: number
}

/** A route as stored with a quote and in an operation's params (JSON-safe). */
export type SwapRoute = {
  kind: 'curve-buy' | 'curve-sell' | 'amm'
  /** Token addresses along the route, lower case; WETH stands for ETH. */
  path: Address[]
  hops: RouteHop[]
}

export type HopFee = { hop: number; token: Address; amount: bigint; feeBps: number }

export type PricedRoute = SwapRoute & {
  /** amounts[0] = amountIn, amounts[i + 1] = output of hop i. */
  amounts: bigint[]
  amountOut: bigint
  /** Price impact (fees excluded) of the whole route, against the mid prices before the trade. */
  priceImpactBps: number
  fees: HopFee[]
}

/** A token as a swap names it. */
export type SwapTokenInfo = {
  /** Lower case; WETH's address for ETH. */
  address: Address
  symbol: string
  decimals: number
  /** Quote assets, stocks, and tokens an operator verified. */
  verified: boolean
  /** True for ETH: held natively, traded as WETH. */
  native: boolean
}

/**
 * Params of a `swap` wallet operation (JSON: amounts in base units as decimal strings).
 * `tokenIn`/`tokenOut` are lower-case addresses (WETH for ETH), `amountIn` and `valueInUsd`
 * as the portfolio's cost basis reads them.
 */
export type SwapParams = {
  tokenIn: Address
  tokenOut: Address
  tokenInInfo: SwapTokenInfo
  tokenOutInfo: SwapTokenInfo
  amountIn: string
  minAmountOut: string
  /** Output the route quoted when the operation was created. */
  expectedAmountOut: string
  slippageBps: number
  route: SwapRoute
  /** Spender to approve (max) for tokenIn first, or null when the allowance suffices or ETH is paid. */
  approve: Address | null
  /** Gas limit of the swap when an approval precedes it (it cannot be estimated before the approval is mined). */
  swapGas: string | null
  /** Router deadline (unix seconds). */
  deadline: string
  valueInUsd: string
  valueOutUsd: string | null
  priceImpactBps: number
  quoteId: string | null
  warnings: Array<{ code: string; message: string }>
}

/** One simulated call of a plan: whether it succeeded, its gas and return data, the revert reason. */
export type SimulatedCall = { ok: boolean; gasUsed: bigint; data: Hex; reason: string | undefined }

/** A transaction a wallet operation plans (the outbox signs it with the wallet's next nonce). */
export type PlannedTx = { kind: string; to?: `0x${string}` | undefined; data?: Hex | undefined; value?: bigint | undefined; gas?: bigint | undefined }

import type { Address } from 'viem'
import type { SwapRoute } from './swap.types.ts'
import type { SwapParams } from './swap.types.ts'
import { InsufficientFundsError, SimulationRevertedError } from '../errors.ts'
import { SlippageExceededError, UnverifiedTokenError } from './errors.ts'
import type { StoredQuote, SwapToken, SwapWarning } from './ports.ts'

/** Router deadline after the transaction is planned. */
export const DEADLINE_SECONDS = 600n
/** How long a quote's `minAmountOut` can be executed with `quoteId`. */
export const QUOTE_TTL_MS = 30_000
/** Above this, a quote warns about price impact (the policy cap decides whether it may execute). */
export const HIGH_IMPACT_BPS = 500
/** The reference router's and launchpad's reverts for an output under the caller's minimum. */
const SLIPPAGE_REVERTS = /AmmRouter: insufficient output amount|Launchpad: (tokens|quote) out below minimum/

/** What a swap asks for, resolved: compared with a quote or an earlier operation of the same key. */
export type SwapAsk = { agentId: string; tokenIn: SwapToken; tokenOut: SwapToken; amountIn: bigint; slippageBps: number }

/** The least output accepted: the quoted output less the slippage allowance. */
export function minAmountOut(amountOut: bigint, slippageBps: number): bigint {
  return (amountOut * BigInt(10_000 - slippageBps)) / 10_000n
}

/** Unverified tokens must be acknowledged before they are traded. */
export function requireAcknowledged(tokens: SwapToken[], acknowledged: boolean | undefined): void {
  const unverified = tokens.filter((t) => !t.verified)
  if (unverified.length > 0 && acknowledged !== true) throw new UnverifiedTokenError({ tokens: unverified })
}

/** The tokens the agent's policy lists are checked against: both sides of the swap. */
export function policyTokens(ask: Pick<SwapAsk, 'tokenIn' | 'tokenOut'>) {
  return [ask.tokenIn, ask.tokenOut].map((t) => ({ symbol: t.symbol, address: t.address, verified: t.verified }))
}

/** A field error when tokenOut is tokenIn (ETH and WETH count as the same asset). */
export function sameTokenError(tokenIn: SwapToken, tokenOut: SwapToken): string | undefined {
  if (tokenIn.address !== tokenOut.address) return undefined
  return tokenIn.native !== tokenOut.native ? 'ETH and WETH are the same asset; wrapping is not a swap.' : 'Must differ from tokenIn.'
}

/** A field error when the amount has more decimals than the token. */
export function amountDecimalsError(amount: string, token: Pick<SwapToken, 'decimals' | 'symbol'>): string | undefined {
  const decimals = amount.split('.')[1]?.length ?? 0
  return decimals > token.decimals ? `At most ${token.decimals} decimals for ${token.symbol}.` : undefined
}

/** Whether a stored quote is for exactly this swap (else executing with it is a `quote_mismatch`). */
export function quoteMatches(q: StoredQuote, ask: SwapAsk): boolean {
  return (
    q.agentId === ask.agentId &&
    q.tokenIn === ask.tokenIn.address &&
    q.nativeIn === ask.tokenIn.native &&
    q.tokenOut === ask.tokenOut.address &&
    q.nativeOut === ask.tokenOut.native &&
    q.amountIn === ask.amountIn &&
    q.slippageBps === ask.slippageBps
  )
}

/** Whether an existing operation is this same swap (a retry with the same Idempotency-Key). */
export function operationMatches(op: { agentId: string; params: SwapParams }, ask: SwapAsk): boolean {
  const p = op.params
  return (
    op.agentId === ask.agentId &&
    p.tokenIn === ask.tokenIn.address &&
    p.tokenOut === ask.tokenOut.address &&
    p.tokenInInfo.native === ask.tokenIn.native &&
    p.tokenOutInfo.native === ask.tokenOut.native &&
    p.amountIn === ask.amountIn.toString() &&
    p.slippageBps === ask.slippageBps
  )
}

/** The warnings a quote or a swap carries, besides the sell-back check of an unverified token out. */
export function swapWarnings(p: { tokenIn: SwapToken; tokenOut: SwapToken; priceImpactBps: number; inUsd: string | null; outUsd: string | null }): SwapWarning[] {
  const warnings: SwapWarning[] = []
  for (const [side, t] of [['tokenIn', p.tokenIn], ['tokenOut', p.tokenOut]] as const) {
    if (!t.verified) {
      warnings.push({
        code: 'unverified_token',
        message: `${side} ${t.symbol} (${t.address}) is not a verified token; anyone can create a token with any name. Executing needs acknowledgeUnverified: true.`,
      })
    }
  }
  if (p.priceImpactBps > HIGH_IMPACT_BPS) {
    warnings.push({ code: 'high_price_impact', message: `This trade moves the price by about ${(p.priceImpactBps / 100).toFixed(2)}%.` })
  }
  if (p.inUsd === null && p.outUsd === null) {
    warnings.push({ code: 'unpriced', message: 'Neither token has a market to value it in USD; the policy caps see $0.' })
  }
  return warnings
}

/** The policy needs a value for what leaves the wallet: an unpriced token in is valued by what comes out. */
export const policyValueUsd = (inUsd: string | null, outUsd: string | null) => inUsd ?? outUsd ?? '0.00'

/** Whether a revert reason is the venue refusing an output under the minimum. */
export const isSlippageRevert = (reason: string | undefined) => SLIPPAGE_REVERTS.test(reason ?? '')

/** Gas limit for a transaction from a simulated gas use: half again plus a margin (refunds, 63/64ths). */
export const gasLimitFrom = (gasUsed: bigint) => (gasUsed * 3n) / 2n + 30_000n

/** Fee cap per gas: twice the base fee plus a 1 gwei tip (1 gwei base when the block has none). */
export const maxFeePerGasOf = (baseFeePerGas: bigint | null) => (baseFeePerGas ?? 1_000_000_000n) * 2n + 1_000_000_000n

/** ETH the wallet must hold: every transaction's gas at the fee cap, plus the ETH the swap pays. */
export const ethNeeded = (gases: bigint[], maxFeePerGas: bigint, value: bigint) => gases.reduce((s, g) => s + g * maxFeePerGas, 0n) + value

/** The approval a swap needs first: the spender, when the allowance is short of the amount. */
export const approvalNeeded = (spender: Address | null, allowance: bigint, amountIn: bigint) => (spender && allowance < amountIn ? spender : null)

/** A swap that ended failed before anything was signed is refused (422), not answered as a failed swap. */
export function preChainRefusal(error: { code: string; message: string } | null | undefined, failed: boolean): Error | undefined {
  if (!failed || !error) return undefined
  if (error.code === 'insufficient_funds') return new InsufficientFundsError({ message: error.message })
  if (error.code === 'slippage_exceeded') return new SlippageExceededError({ message: error.message })
  if (error.code !== 'simulation_reverted') return undefined
  // The price can also move between this request's simulation and the send's own estimate.
  return isSlippageRevert(error.message) ? new SlippageExceededError({ message: error.message }) : new SimulationRevertedError({ message: error.message })
}

/** The route as stored with a quote or an operation (no amounts). */
export const bareRoute = (r: SwapRoute): SwapRoute => ({ kind: r.kind, path: r.path, hops: r.hops })

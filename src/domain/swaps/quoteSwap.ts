import { checkTokenLists } from '../agents/policyCheck.ts'
import type { SwapPorts } from './ports.ts'
import type { SwapRequest } from './swap.schema.ts'
import { resolveSwap } from './resolveSwap.ts'
import { priceSwap } from './priceSwap.ts'
import { bareRoute, minAmountOut, QUOTE_TTL_MS } from './swapRules.ts'
import { fmt, routeResource, tokenNames } from './swapResource.ts'

export type QuoteSwapDeps = Pick<SwapPorts, 'agents' | 'tokens' | 'market' | 'simulator' | 'quotes' | 'clock' | 'newId'> & Partial<Pick<SwapPorts, 'paper'>>
export type QuoteSwapInput = SwapRequest

/**
 * Quotes a swap from an agent wallet; nothing is sent. The quote is kept 30 s: executing with
 * its `quoteId` keeps its route and minAmountOut, once.
 *
 * @example
 * const q = await quoteSwap(deps, readSwapRequest(accountId, { agentId, tokenIn: 'ETH', tokenOut: 'USDC', amountIn: '1' }))
 */
export async function quoteSwap(deps: QuoteSwapDeps, input: QuoteSwapInput) {
  // The latest block is asked for while the request is checked: two round trips at once.
  const pinned = deps.market.atLatestBlock()
  pinned.catch(() => {})
  const p = await resolveSwap(deps, input, 'quote')
  checkTokenLists(p.agent.policy, [p.tokenIn, p.tokenOut])
  const { priced, valueInUsd, valueOutUsd, warnings } = await priceSwap(deps, p, undefined, pinned)
  const now = deps.clock.now()
  const quoteId = deps.newId()
  const min = minAmountOut(priced.amountOut, p.input.slippageBps)
  await deps.quotes.save(quoteId, {
    accountId: input.accountId,
    agentId: p.input.agentId,
    tokenIn: p.tokenIn.address,
    nativeIn: p.tokenIn.native,
    tokenOut: p.tokenOut.address,
    nativeOut: p.tokenOut.native,
    amountIn: p.amountIn,
    slippageBps: p.input.slippageBps,
    route: bareRoute(priced),
    minAmountOut: min,
    expiresAt: now + QUOTE_TTL_MS,
  })
  const d = tokenNames(deps.tokens, p)
  return {
    quoteId,
    expiresAt: new Date(now + QUOTE_TTL_MS).toISOString(),
    agentId: p.input.agentId,
    tokenIn: p.tokenIn,
    tokenOut: p.tokenOut,
    amountIn: fmt(p.amountIn, p.tokenIn.decimals),
    amountOut: fmt(priced.amountOut, p.tokenOut.decimals),
    minAmountOut: fmt(min, p.tokenOut.decimals),
    slippageBps: p.input.slippageBps,
    priceImpactBps: priced.priceImpactBps,
    route: routeResource(priced, d, priced.amounts),
    fees: priced.fees.map((f) => ({
      hop: f.hop,
      venue: priced.hops[f.hop]!.venue,
      feeBps: f.feeBps,
      token: { symbol: d.symbol(f.token), address: f.token },
      amount: fmt(f.amount, d.decimals(f.token)),
    })),
    valueInUsd,
    valueOutUsd,
    warnings,
  }
}
export type SwapQuote = Awaited<ReturnType<typeof quoteSwap>>

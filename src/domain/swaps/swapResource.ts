import { formatUnits, type Address } from 'viem'
import type { SwapRoute } from './swap.types.ts'
import type { SwapParams } from './swap.types.ts'
import type { SwapToken, WalletOpView } from './ports.ts'
import type { ApprovalRecord } from '../approvals/approval.types.ts'

export const fmt = (v: bigint | string, decimals: number) => formatUnits(BigInt(v), decimals)

/** Names and decimals of the tokens a route passes through (WETH and USDC, and the swap's own). */
export type TokenNames = { symbol(a: string): string; decimals(a: string): number }

export function tokenNames(known: { weth: Address; usdc: Address }, p: { tokenIn: SwapToken; tokenOut: SwapToken }): TokenNames {
  const symbols = new Map<string, string>([
    [known.weth.toLowerCase(), 'WETH'],
    [known.usdc.toLowerCase(), 'USDC'],
    [p.tokenIn.address, p.tokenIn.native ? 'WETH' : p.tokenIn.symbol],
    [p.tokenOut.address, p.tokenOut.native ? 'WETH' : p.tokenOut.symbol],
  ])
  const decimals = new Map<string, number>([
    [known.weth.toLowerCase(), 18],
    [known.usdc.toLowerCase(), 6],
    [p.tokenIn.address, p.tokenIn.decimals],
    [p.tokenOut.address, p.tokenOut.decimals],
  ])
  return { symbol: (a) => symbols.get(a) ?? a, decimals: (a) => decimals.get(a) ?? 18 }
}

/** The hops of a route, with the amounts of each when known. */
export function routeResource(route: SwapRoute, d: TokenNames, amounts?: bigint[]) {
  return route.hops.map((h, i) => ({
    venue: h.venue,
    address: h.address,
    tokenIn: { symbol: d.symbol(h.tokenIn), address: h.tokenIn },
    tokenOut: { symbol: d.symbol(h.tokenOut), address: h.tokenOut },
    feeBps: h.feeBps,
    ...(amounts ? { amountIn: fmt(amounts[i]!, d.decimals(h.tokenIn)), amountOut: fmt(amounts[i + 1]!, d.decimals(h.tokenOut)) } : {}),
  }))
}

/** A swap: the wallet operation and what it was asked and planned to do. */
export function swapResource(known: { weth: Address; usdc: Address }, op: WalletOpView, p: SwapParams) {
  const r = op as typeof op & { amountOutBaseUnits?: string; gasUsed?: string; blockNumber?: string }
  const tin = p.tokenInInfo
  const tout = p.tokenOutInfo
  return {
    id: op.id,
    agentId: op.agentId,
    status: op.status,
    txHash: op.txHash,
    tokenIn: tin,
    tokenOut: tout,
    amountIn: fmt(p.amountIn, tin.decimals),
    amountOut: r.amountOutBaseUnits !== undefined ? fmt(r.amountOutBaseUnits, tout.decimals) : null,
    amountOutBaseUnits: r.amountOutBaseUnits ?? null,
    expectedAmountOut: fmt(p.expectedAmountOut, tout.decimals),
    minAmountOut: fmt(p.minAmountOut, tout.decimals),
    slippageBps: p.slippageBps,
    priceImpactBps: p.priceImpactBps,
    valueInUsd: p.valueInUsd,
    valueOutUsd: p.valueOutUsd,
    gasUsed: r.gasUsed ?? null,
    blockNumber: r.blockNumber ?? null,
    route: routeResource(p.route, tokenNames(known, { tokenIn: tin, tokenOut: tout })),
    quoteId: p.quoteId,
    warnings: p.warnings,
    // Present when the agent's policy asked an owner to approve the swap (docs/api.md, "Approvals").
    ...(op.approval ? { approvalId: op.approvalId as string, approval: op.approval as ApprovalRecord } : {}),
    // The owners' policies' decision and the rule that made it (docs/api.md, "Policies"), on a swap recorded since they exist.
    ...(op.policy ? { policy: op.policy as { decision: string; rule: { name: string; scope: string } | null } } : {}),
    error: op.error,
  }
}
export type Swap = ReturnType<typeof swapResource>

import type { Bound } from '../../domain/util/bound.ts'
import type { getPortfolio } from '../../domain/wallet/getPortfolio.ts'
import type { quoteSwap } from '../../domain/swaps/quoteSwap.ts'
import { readSwapRequest } from '../../domain/swaps/swap.schema.ts'
import { shareOfHolding, twapSliceAmount } from '../../domain/automations/orderRules.ts'
import { mirrorSwapArgs } from '../../domain/automations/mirrorKind.ts'
import type { AutomationContext, FireParams } from './automation.machine.ts'

/** What an order's amount is worked out with: the core's portfolio and quotes. */
export type OrderCalls = { getPortfolio: Bound<typeof getPortfolio>; quoteSwap: Bound<typeof quoteSwap> }

/** A firing's end decided before its swap: refused (`fire.failed`) or a TWAP slice skipped and counted (`fire.skipped`). */
export type OrderRefusal = { type: 'fire.failed'; code: string; reason: string; refusal?: true } | { type: 'fire.skipped'; reason: string; counted: true }

const sameToken = (ref: string, h: { symbol: string; address: string | null }) =>
  ref.toLowerCase() === h.symbol.toLowerCase() || (h.address !== null && ref.toLowerCase() === h.address.toLowerCase())

/**
 * The swap arguments of a protective or sliced order's firing, worked out when it fires: a
 * protective order sells `share` of the agent's holding of its token as the wallet holds it now
 * (`nothing_to_sell` when it holds none); a TWAP's slice `slice` swaps its part of the total,
 * quoted first: a quoted price impact over `maxPriceImpactBps` skips the slice (it counts as
 * done and is reported on the firing; the total is never exceeded). Other automations' arguments
 * are theirs as they are.
 */
export async function orderArgs(core: OrderCalls, a: AutomationContext, params: FireParams, args: Record<string, unknown>): Promise<{ args: Record<string, unknown> } | OrderRefusal> {
  try {
    return await workOut(core, a, params, args)
  } catch (err) {
    // A refusal of the holding's read or the quote (a policy, an unknown token) is the firing's answer; an outage is tried again.
    const e = err as { code?: string; message?: string; status?: number }
    if (!e.code || (e.status ?? 500) >= 500) throw err
    return { type: 'fire.failed', code: e.code, reason: e.message ?? 'refused' }
  }
}

async function workOut(core: OrderCalls, a: AutomationContext, params: FireParams, args: Record<string, unknown>): Promise<{ args: Record<string, unknown> } | OrderRefusal> {
  const order = a.order
  if (!order) return { args }
  if (order.mirror) {
    // A mirror copies a leader's swap: a manual trigger has none to copy.
    if (params.source.source !== 'leader_swap') return { type: 'fire.failed', code: 'nothing_to_copy', reason: 'A mirror fires on its leader\'s confirmed swaps only.' }
    return mirrorSwapArgs(order.mirror, params.source.swap, Date.now(), args)
  }
  const tokenIn = String(args.tokenIn)
  if (order.share !== undefined) {
    const p = await core.getPortfolio({ accountId: a.accountId, agentId: a.agentId })
    const held = p.holdings.find((h) => sameToken(tokenIn, h))
    const amountIn = held ? shareOfHolding({ balance: held.balance, decimals: held.decimals, share: order.share, native: held.address === null }) : '0'
    if (!/[1-9]/.test(amountIn)) return { type: 'fire.failed', code: 'nothing_to_sell', reason: `The agent holds no ${tokenIn} to sell.` }
    return { args: { ...args, amountIn } }
  }
  if (!order.twap || !params.slice) return { args }
  const t = order.twap
  const quote = (amountIn: string) => core.quoteSwap(readSwapRequest(a.accountId, { ...args, amountIn, agentId: a.agentId }))
  // Each slice is an exact part of the total in the token's base units (decimals kept at creation; else a quote of the total tells them).
  const decimals = t.decimals ?? (await quote(t.amountIn)).tokenIn.decimals
  const amountIn = twapSliceAmount({ total: t.amountIn, decimals, slices: t.slices, slice: params.slice })
  if (!/[1-9]/.test(amountIn)) return { type: 'fire.skipped', reason: `slice_empty: slice ${params.slice} of ${t.slices} has nothing left to swap.`, counted: true }
  const impact = (await quote(amountIn)).priceImpactBps
  if (impact > t.maxPriceImpactBps) {
    return { type: 'fire.skipped', reason: `price_impact_exceeded: slice ${params.slice} of ${t.slices} (${amountIn}) quoted ${impact} bps, over maxPriceImpactBps ${t.maxPriceImpactBps}.`, counted: true }
  }
  return { args: { ...args, amountIn } }
}

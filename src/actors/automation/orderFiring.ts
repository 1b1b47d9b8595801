import type { FiringSource } from '../../domain/automations/automation.types.ts'
import { bracketSide, trailingStopLevel } from '../../domain/automations/orderRules.ts'
import type { AutomationContext } from './automationContext.ts'

/**
 * What a block's price (`automation.price`) does to an armed trailing stop or bracket: the
 * firing it starts (`fires`, a price source; a bracket's names its side), and what it changes (a
 * trailing stop's `high`, raised first: the level is taken from the high including this price).
 * Pure: the price and block come in the event; nothing is read.
 *
 * @example
 * priceFiring(trailing, { block: '12', priceUsd: '90' }) // { fires: { source: 'price', ... }, changes: { high: '100' } }
 */
export function priceFiring(c: AutomationContext, e: { block: string; priceUsd: string }): { fires: FiringSource | null; changes: Partial<AutomationContext> } {
  const t = c.trigger
  const price = { source: 'price' as const, block: e.block, priceUsd: e.priceUsd }
  if (t.type === 'bracket') {
    const side = bracketSide(t, e.priceUsd)
    return { fires: side ? { ...price, side } : null, changes: {} }
  }
  if (t.type !== 'trailing_stop') return { fires: null, changes: {} }
  const high = c.high && Number(c.high) >= Number(e.priceUsd) ? c.high : e.priceUsd
  const fires = Number(e.priceUsd) <= trailingStopLevel(t, high)
  return { fires: fires ? price : null, changes: high === c.high ? {} : { high } }
}

/** The slice a TWAP's next firing serves (1-based: the slices done so far, plus one), else undefined. */
export const sliceOf = (c: AutomationContext): number | undefined => (c.order?.twap ? c.runCount + 1 : undefined)

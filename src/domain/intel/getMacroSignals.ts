import { quoteDecimalsOf, usdNumber } from './intelFigures.ts'
import type { IntelPorts } from './ports.ts'
import type { MacroInput } from './intel.schema.ts'
import { moversOf } from './getTopMovers.ts'
import { breadth, fearGreed, flowSentiment, indexSentiment, medianAbsChange } from './signalRules.ts'

export type GetMacroDeps = IntelPorts

type Signal = { category: string; signal: string; value: number; sentiment: 'bullish' | 'bearish' | 'neutral'; updatedAt: string }

/**
 * Macro signals from what the chain shows in the last 24 h (each trade in USD at its block):
 * - stablecoins / usdc_net_flow_24h: USD of USDC that bought launched tokens minus USDC paid out
 *   by their sales (positive: stablecoins flowing into risk);
 * - dominance / eth_volume_dominance: ETH-quoted share of the USD volume (0-1);
 * - breadth / advancers_ratio: share of launched tokens up over 24 h;
 * - volatility / median_abs_change_24h: median |24 h change| (a decimal);
 * - sentiment / fear_greed_index: signalRules.fearGreed (0-100).
 * A signal without data (no trades, no priced token) is left out, never invented; so is
 * stablecoin supply, which the index does not follow.
 */
export async function getMacroSignals(deps: GetMacroDeps, input: MacroInput) {
  const [macro, movers] = await Promise.all([deps.memo.cached('macro', () => deps.intel.macro({ chainId: deps.prices.deployment?.chainId })), moversOf(deps, '24h')])
  const updatedAt = (macro.updatedAt ?? new Date()).toISOString()
  const usdOfFlow = (symbol: string, side: 'buy' | 'sell') =>
    macro.flows
      .filter((f) => f.quoteSymbol === symbol && f.side === side && f.usdTimesUnits !== null)
      .reduce((s, f) => s + usdNumber(f.usdTimesUnits! / 10n ** BigInt(quoteDecimalsOf(deps, symbol))), 0)
  const signals: Signal[] = []
  const add = (category: string, signal: string, value: number, sentiment: Signal['sentiment']) => signals.push({ category, signal, value: Math.round(value * 1e6) / 1e6, sentiment, updatedAt })
  const usdcFlows = macro.flows.filter((f) => f.quoteSymbol === 'USDC')
  if (usdcFlows.length) {
    const net = usdOfFlow('USDC', 'buy') - usdOfFlow('USDC', 'sell')
    add('stablecoins', 'usdc_net_flow_24h', net, flowSentiment(net))
  }
  const total = [...new Set(macro.flows.map((f) => f.quoteSymbol))].reduce((s, q) => s + usdOfFlow(q, 'buy') + usdOfFlow(q, 'sell'), 0)
  if (total > 0) add('dominance', 'eth_volume_dominance', (usdOfFlow('ETH', 'buy') + usdOfFlow('ETH', 'sell')) / total, 'neutral')
  const changes = movers.filter((m) => m.trades > 0 && m.change !== null).map((m) => m.change!)
  const b = breadth(changes)
  if (b !== null) add('breadth', 'advancers_ratio', b, b > 0.5 ? 'bullish' : b < 0.5 ? 'bearish' : 'neutral')
  const v = medianAbsChange(changes)
  if (v !== null) add('volatility', 'median_abs_change_24h', v, 'neutral')
  const fg = fearGreed(changes)
  if (fg !== null) add('sentiment', 'fear_greed_index', fg, indexSentiment(fg))
  const include = new Set<string>(input.include ?? [])
  return { signals: signals.filter((s) => include.size === 0 || include.has(s.category)) }
}

import type { IntelPorts } from './ports.ts'
import type { CandlesInput } from './intel.schema.ts'
import { candleSeries, candleView, resolveMint } from './intelFigures.ts'

export type GetCandlesDeps = Pick<IntelPorts, 'prices' | 'intel'>

/**
 * OHLCV candles of a token with a pool the index follows (a launched token, WETH, a stock;
 * intelTokens.ts) from its indexed trades, in its quote asset and in USD (each trade at its
 * block's quote price), gaps filled flat (src/domain/intel/candleRules.ts).
 *
 * @example
 * const { candles } = await getCandles(deps, { address, interval: '1m' })
 */
export async function getCandles(deps: GetCandlesDeps, input: CandlesInput) {
  const t = await resolveMint(deps, input.address)
  const s = await candleSeries(deps, t, input)
  return {
    address: t.address,
    symbol: t.symbol,
    quote: t.quoteSymbol,
    interval: input.interval,
    from: s.from.toISOString(),
    to: s.to.toISOString(),
    candles: s.candles.map((c) => candleView(c, s.quoteDecimals)),
  }
}

import { marketCapInQuote, tokenUnitUsd, usdOf } from '../tokens/priceMath.ts'
import type { IntelPorts, MoverRow } from './ports.ts'
import { moversTimeframes, type TopMoversInput } from './intel.schema.ts'
import { quoteDecimalsOf, usdNumber } from './intelFigures.ts'
import { referenceAssets } from './intelTokens.ts'
import { changeOf } from './signalRules.ts'

export type GetTopMoversDeps = IntelPorts

/**
 * A board row with its USD figures now; null when its quote asset has no USD price or it was
 * never priced. `marketCap` is null for a reference asset (WETH, a stock), as on /price.
 */
export type Mover = { mint: string; symbol: string; name: string; price: number; change: number | null; volume: number; marketCap: number | null; liquidity: number; verified: boolean; trades: number }

/**
 * Every launched token's and reference asset's (WETH, the stocks, in their USDC pools;
 * intelTokens.ts) move over 1 h, 4 h or 24 h (indexed prices: the latest against the last
 * trade before the window, or the token's first price), volume in the window, market cap and
 * liquidity (its curve or pool's real quote reserve, both sides: 2 x quote reserve) in USD at
 * today's quote prices. The whole board is read once per `timeframe` and shared for a moment.
 */
export async function moversOf(deps: GetTopMoversDeps, timeframe: keyof typeof moversTimeframes): Promise<Mover[]> {
  return deps.memo.cached(`movers:${timeframe}`, async () => {
    const [rows, quoteUsd] = await Promise.all([
      deps.intel.movers({ chainId: deps.prices.deployment?.chainId, windowSeconds: moversTimeframes[timeframe], reference: referenceAssets(deps.prices.deployment) }),
      deps.prices.quoteUsdOrPeg(),
    ])
    return rows.map((r) => moverOf(deps, r, quoteUsd.get(r.quoteSymbol) ?? null)).filter((m): m is Mover => m !== null)
  })
}

function moverOf(deps: Pick<IntelPorts, 'prices'>, r: MoverRow, quoteUsd18: bigint | null): Mover | null {
  if (r.price === null || quoteUsd18 === null) return null
  const dec = quoteDecimalsOf(deps, r.quoteSymbol)
  return {
    mint: r.address, symbol: r.symbol, name: r.name, verified: r.verified, trades: r.trades,
    price: usdNumber(tokenUnitUsd(r.price, dec, quoteUsd18)),
    change: changeOf(r.price, r.priceThen),
    volume: usdNumber(usdOf(r.volume, dec, quoteUsd18)),
    marketCap: r.totalSupply === null ? null : usdNumber(usdOf(marketCapInQuote(r.price, r.totalSupply), dec, quoteUsd18)),
    liquidity: usdNumber(usdOf(2n * (r.quoteReserve ?? 0n), dec, quoteUsd18)),
  }
}

/**
 * The reference client's top movers: gainers (largest change first), losers (smallest first) or
 * by volume; `min_liquidity` in USD. Gainers and losers list only tokens traded in the window.
 *
 * @example
 * const { movers } = await getTopMovers(deps, { timeframe: '24h', limit: 10, sort_by: 'gainers', min_liquidity: undefined })
 */
export async function getTopMovers(deps: GetTopMoversDeps, input: TopMoversInput) {
  const all = await moversOf(deps, input.timeframe)
  const eligible = all.filter((m) => m.liquidity >= (input.min_liquidity ?? 0) && (input.sort_by === 'volume' || (m.trades > 0 && m.change !== null)))
  const sorted = [...eligible].sort((a, b) =>
    input.sort_by === 'volume' ? b.volume - a.volume : input.sort_by === 'gainers' ? b.change! - a.change! : a.change! - b.change!,
  )
  return {
    timeframe: input.timeframe,
    sortBy: input.sort_by,
    movers: sorted.slice(0, input.limit).map(({ mint, symbol, name, price, change, volume, marketCap, liquidity }) => ({ mint, symbol, name, price, change, volume, marketCap, liquidity })),
  }
}

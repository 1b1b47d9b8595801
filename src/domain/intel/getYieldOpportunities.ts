import { tokenAmountUsd, usdOf } from '../tokens/priceMath.ts'
import type { IntelPorts } from './ports.ts'
import type { YieldInput } from './intel.schema.ts'
import { quoteDecimalsOf, usdNumber } from './intelFigures.ts'
import { referenceAssets } from './intelTokens.ts'
import { poolApyPercent, poolRisk } from './signalRules.ts'

export type GetYieldDeps = IntelPorts

/** The protocol name our AMM's pools answer under. */
export const AMM_PROTOCOL = 'launchpad-amm'

/**
 * Liquidity pools on our AMM as yield (launched tokens' and the reference assets': WETH/USDC,
 * the stocks' USDC pools): APY (percent) from the last 24 h of
 * LP fees (0.3% of the volume swapped through the pool) over its TVL (both real reserves in USD
 * at today's prices), `risk` by signalRules.poolRisk. Creator-fee vaults are not offered: their
 * fees go to the token's creator, not to a depositor. Highest APY first.
 *
 * @example
 * const { opportunities } = await getYieldOpportunities(deps, { limit: 20, min_apy: 5, protocol: undefined })
 */
export async function getYieldOpportunities(deps: GetYieldDeps, input: YieldInput) {
  if (input.protocol !== undefined && input.protocol.toLowerCase() !== AMM_PROTOCOL) return { opportunities: [] }
  const all = await deps.memo.cached('yield', async () => {
    const [pools, quoteUsd] = await Promise.all([deps.intel.pools({ chainId: deps.prices.deployment?.chainId, reference: referenceAssets(deps.prices.deployment) }), deps.prices.quoteUsdOrPeg()])
    return pools.flatMap((p) => {
      const q = quoteUsd.get(p.quoteSymbol)
      if (q === undefined) return []
      const dec = quoteDecimalsOf(deps, p.quoteSymbol)
      const tvl = usdNumber(usdOf(p.quoteReserve, dec, q) + tokenAmountUsd(p.tokenReserve, p.price, dec, q))
      const volume = usdNumber(usdOf(p.volume24h, dec, q))
      return [{
        protocol: AMM_PROTOCOL, pool: p.pool, tokens: [p.symbol, p.quoteSymbol], apy: poolApyPercent(volume, tvl),
        tvl: Math.round(tvl * 100) / 100, risk: poolRisk(tvl, p.verified), type: 'liquidity_pool', mint: p.token,
      }]
    })
  })
  const opportunities = all.filter((o) => o.apy >= (input.min_apy ?? 0)).sort((a, b) => b.apy - a.apy || b.tvl - a.tvl).slice(0, input.limit)
  return { opportunities }
}

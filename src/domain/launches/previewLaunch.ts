import { formatEther, formatUnits } from 'viem'
import { formatUsd, usdOf } from '../tokens/priceMath.ts'
import type { LaunchRequest } from './launch.schema.ts'
import { startingFigures } from './launchRules.ts'
import type { LaunchPorts } from './ports.ts'
import { resolveLaunch } from './resolveLaunch.ts'

export type PreviewLaunchDeps = Pick<LaunchPorts, 'agents' | 'venues' | 'prices' | 'simulator' | 'spend' | 'newId'>

/**
 * What a launch would do, with nothing sent or recorded: the same checks and simulation as a
 * real launch (same errors), the predicted token address, gas and its cost in ETH and USD, the
 * starting price and market cap, and the venue's fees.
 *
 * @example
 * const preview = await previewLaunch(deps, readPreviewRequest(accountId, { venue: 'venue-b', agentId, symbol: 'PREV', name: 'Preview', quote: 'ETH' }))
 */
export async function previewLaunch(deps: PreviewLaunchDeps, req: LaunchRequest) {
  const { input } = await resolveLaunch(deps, req, deps.newId())
  const { gas, maxFeePerGas } = await deps.simulator.simulate(input)
  const [predicted, usd] = await Promise.all([deps.simulator.predict(input), deps.prices.unitUsd18(input.quote)])
  if (!usd) throw new Error(`no USD price for quote asset ${input.quote}`)
  const costWei = gas * maxFeePerGas
  const starting = startingFigures({ ...predicted, quoteUsd18: usd.quote })
  return {
    venue: input.venue,
    agentId: input.agentId,
    symbol: input.symbol,
    name: input.name,
    quote: input.quote,
    predictedTokenAddress: predicted.predictedTokenAddress.toLowerCase(),
    totalSupply: formatEther(predicted.totalSupply),
    gas: { limit: gas.toString(), maxFeePerGasWei: maxFeePerGas.toString(), costEth: formatEther(costWei), costUsd: formatUsd(usdOf(costWei, 18, usd.eth)) },
    startingPrice: starting.price,
    startingMarketCap: { quote: formatUnits(predicted.marketCap, predicted.quoteDecimals), usd: starting.marketCapUsd },
    fees: predicted.fees,
    note: input.venue === 'self-funded' ? 'Pool liquidity is locked for good.' : 'The predicted address holds if no other launch lands first.',
  }
}
export type LaunchPreview = Awaited<ReturnType<typeof previewLaunch>>

import { formatEther, formatUnits, getContractAddress, type LocalAccount } from 'viem'
import type { ChainHandle } from './chain.ts'
import type { LaunchInput } from '../actors/launch.machine.ts'
import { simulateLaunch } from './launchEffects.ts'
import { LAUNCH_SUPPLY, VENUE_B_STARTING_MARKET_CAP, parseAmount, quoteAsset, seedOf } from './launchTx.ts'
import { BondingCurveLaunchpadArtifact, InstantPoolLauncherArtifact } from './artifacts/index.ts'
import { createPriceReader } from './priceReader.ts'
import { formatPrice, formatUsd, usdOf } from '../domain/tokens/priceMath.ts'

/**
 * What a launch would do, with nothing sent: the simulation a real launch runs (same errors),
 * the predicted token address, gas and its cost in ETH and USD, the starting price and market
 * cap, and the venue's fees.
 */
export async function previewLaunch(chain: ChainHandle, input: LaunchInput, account: LocalAccount) {
  const { gas, maxFeePerGas } = await simulateLaunch({ chain }, input, account)
  const client = chain.publicClient
  const q = quoteAsset(chain.manifest, input.quote)
  const prices = await createPriceReader(chain)
  const [eth, quoteUsd] = await Promise.all([prices.quote('ETH'), prices.quote(input.quote)])
  if (!eth || !quoteUsd) throw new Error(`no USD price for quote asset ${input.quote}`)
  const costWei = gas * maxFeePerGas

  let predictedTokenAddress: string
  let marketCap: bigint
  let fees: Record<string, string | number>
  if (input.venue === 'venue-a') {
    const nonce = await client.getTransactionCount({ address: chain.manifest.contracts.venueA })
    predictedTokenAddress = getContractAddress({ from: chain.manifest.contracts.venueA, nonce: BigInt(nonce) })
    const cfg = await client.readContract({
      address: chain.manifest.contracts.venueA, abi: BondingCurveLaunchpadArtifact.abi, functionName: 'quoteConfig', args: [q.address],
    }) as readonly [boolean, bigint, bigint]
    marketCap = cfg[1]
    fees = { tradeFeeBps: 100, creatorShareBps: 5000, platformShareBps: 5000, graduationThreshold: formatUnits(cfg[2], q.decimals) }
  } else if (input.venue === 'venue-b') {
    const nonce = await client.getTransactionCount({ address: chain.manifest.contracts.venueB })
    predictedTokenAddress = getContractAddress({ from: chain.manifest.contracts.venueB, nonce: BigInt(nonce) })
    marketCap = parseAmount(VENUE_B_STARTING_MARKET_CAP[input.quote] ?? '1', q.decimals)
    fees = { poolFeeBps: 100, lpFeeBps: 30, creatorShareBps: 5000, platformShareBps: 5000 }
  } else {
    const nonce = await client.getTransactionCount({ address: account.address, blockTag: 'pending' })
    predictedTokenAddress = getContractAddress({ from: account.address, nonce: BigInt(q.native ? nonce : nonce + 1) })
    marketCap = seedOf(chain.manifest, input)
    fees = { lpFeeBps: 30, seed: formatUnits(marketCap, q.decimals) }
  }
  // Price of one whole token: market cap / supply, kept at 18 decimals (a starting price is a
  // tiny fraction of a cent, which base units of a 6-decimal quote or cents cannot show).
  const marketCapUsd18 = usdOf(marketCap, q.decimals, quoteUsd.usd18)
  const priceInQuote18 = (marketCap * 10n ** BigInt(18 - q.decimals) * 10n ** 18n) / LAUNCH_SUPPLY
  return {
    venue: input.venue,
    agentId: input.agentId,
    symbol: input.symbol,
    name: input.name,
    quote: input.quote,
    predictedTokenAddress: predictedTokenAddress.toLowerCase(),
    totalSupply: formatEther(LAUNCH_SUPPLY),
    gas: { limit: gas.toString(), maxFeePerGasWei: maxFeePerGas.toString(), costEth: formatEther(costWei), costUsd: formatUsd(usdOf(costWei, 18, eth.usd18)) },
    startingPrice: { quote: formatPrice(priceInQuote18), usd: formatPrice((marketCapUsd18 * 10n ** 18n) / LAUNCH_SUPPLY) },
    startingMarketCap: { quote: formatUnits(marketCap, q.decimals), usd: formatUsd(marketCapUsd18) },
    fees,
    note: input.venue === 'self-funded' ? 'Pool liquidity is locked for good.' : 'The predicted address holds if no other launch lands first.',
  }
}


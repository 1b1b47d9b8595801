import { getAddress } from 'viem'
import { AmmPairArtifact } from '../../../dev/artifacts/index.ts'
import { pegUsd18, pow10, USD_SCALE } from '../../../domain/tokens/priceMath.ts'
import { mapLimit } from '../../../domain/util/mapLimit.ts'
import { lower, RPC_PARALLEL, type IndexerContext } from './indexerContext.ts'

/**
 * USD per whole unit (usd18) of each quote asset at each block that needs one: USDC pegged, ETH
 * from the WETH/USDC pool's effective reserves at that block (one read per block with ETH
 * trades), anything else unknown (null). What a trade, a candle or a cost basis is worth in
 * dollars is then the price of its own block.
 */
export type QuoteUsdAt = (quoteSymbol: string | undefined, blockNumber: number) => bigint | null

/**
 * @example
 * const usdAt = await readQuoteUsd(ctx, trades.map((t) => ({ quoteSymbol: 'ETH', blockNumber: t.blockNumber })))
 * usdAt('ETH', 57) // 3000n * 10n ** 18n
 */
export async function readQuoteUsd(ctx: IndexerContext, needs: ReadonlyArray<{ quoteSymbol: string | undefined; blockNumber: number }>): Promise<QuoteUsdAt> {
  const ethBlocks = [...new Set(needs.filter((n) => n.quoteSymbol === 'ETH').map((n) => n.blockNumber))]
  const eth = new Map<number, bigint | null>()
  if (ethBlocks.length) {
    const pair = getAddress(ctx.contracts.wethUsdcPair)
    const token0 = lower(await ctx.client.readContract({ address: pair, abi: AmmPairArtifact.abi, functionName: 'token0' }))
    const wethIs0 = token0 === lower(ctx.contracts.weth)
    await mapLimit(ethBlocks, RPC_PARALLEL, async (b) => {
      const [r0, r1] = await ctx.client.readContract({ address: pair, abi: AmmPairArtifact.abi, functionName: 'getEffectiveReserves', blockNumber: BigInt(b) })
        .catch(() => [0n, 0n] as const)
      const [weth, usdc] = wethIs0 ? [r0, r1] : [r1, r0]
      // WETH has 18 decimals, USDC 6.
      eth.set(b, weth === 0n ? null : (usdc * pow10(18) * USD_SCALE) / (weth * pow10(6)))
    })
  }
  return (symbol, block) => (symbol === undefined ? null : (pegUsd18(symbol) ?? (symbol === 'ETH' ? (eth.get(block) ?? null) : null)))
}
